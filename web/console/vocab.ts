/** The API's vocabularies the filters offer (a unit test keeps them equal to lib/'s). */
export const STATUSES = [
  'scheduled',
  'queued',
  'deferred',
  'sent',
  'failed',
  'dead',
  'expired',
  'recalled',
  'canceled',
] as const;

export const MSG_TYPES = [
  'text',
  'image',
  'voice',
  'video',
  'file',
  'textcard',
  'news',
  'mpnews',
  'markdown',
  'miniprogram_notice',
  'template_card',
] as const;

/** What a group robot sends (`GET /v1/messages?robot=` takes these). */
export const ROBOT_MSG_TYPES = [
  'text',
  'markdown',
  'markdown_v2',
  'image',
  'news',
  'file',
  'voice',
  'template_card',
] as const;
