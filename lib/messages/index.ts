export {
  type CardUpdate,
  cardTaskId,
  toWecomCardUpdateBody,
  validateCardUpdate,
  withTaskId,
} from './card.js';
export {
  type Addressed,
  addressOf,
  type Channel,
  type ChannelKind,
  channelKey,
  channelLabel,
  channelOf,
  channelOfKey,
} from './channel.js';
export { ELLIPSIS, fitBlocks, fitLines, truncateChars, truncateUtf8, utf8Bytes } from './fit.js';
export { PARSE_CONFIG, pathOf, toValidationIssues } from './issues.js';
export {
  CARD_TYPE_NAMES,
  GATEWAY_LIMITS,
  LIMITS,
  ROBOT_CARD_TYPE_NAMES,
  ROBOT_LIMITS,
  ROBOT_MSG_TYPE_NAMES,
} from './limits.js';
export {
  convertMarkdown,
  type FallbackMessage,
  type FallbackOptions,
  type MarkdownFallback,
  markdownToText,
  markdownToTextCard,
} from './markdown-fallback.js';
export { ALL_USERS, foldUserId, parseRecipients } from './recipients.js';
export {
  type FontColor,
  firstLink,
  type Inline,
  type Line,
  type LineKind,
  type LinkStyle,
  line,
  link,
  parseInlines,
  parseMarkdown,
  text,
  toMarkdownLine,
  toTextLine,
} from './rich-text.js';
export type { RobotSettings } from './robot-validate.js';
export { DEFAULT_SPLIT_MAX_PARTS, type SplitSettings } from './split.js';
export { renderedProblems, templateProblems } from './template-check.js';
export {
  checkVariables,
  expandTemplateRequest,
  type MessageTemplate,
  parseTemplateString,
  renderTemplateBody,
  sampleVariables,
  TEMPLATE_VARIABLE_NAME,
  type TemplateLookup,
  type TemplateProblem,
  type TemplateVariable,
  templateSyntaxProblems,
} from './templates.js';
export type {
  AppMessageRequest,
  AppSegment,
  CardType,
  MessageRequest,
  MsgType,
  Priority,
  Recipients,
  RobotMessageRequest,
  RobotMsgType,
  RobotSegment,
  Segment,
  SendOptions,
  ValidationIssue,
  ValidationResult,
} from './types.js';
export { MSG_TYPES, type ValidateOptions, validateMessageRequest } from './validate.js';
export { countRecipients, toWecomSendBody } from './wecom-body.js';
