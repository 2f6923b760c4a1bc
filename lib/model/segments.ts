import type { AppMessageRequest, MessageRequest, RobotMessageRequest } from '#lib/messages/index.js';
import type { QueuedMessage } from './queue-body.js';
import type { MessageRecord } from './record.js';

/*
 * Which part of split content (MessageRequest `segments`, the API's "parts") a queued copy sends. The code says
 * segment because in the quota engine a part is a subset of a message's recipients; lib/sender segments.ts sends
 * them one after another.
 */

/** The part a copy sends: 0 for the first (and for content that was not split). */
export const segmentOf = (msg: Pick<QueuedMessage, 'segment'>): number => msg.segment ?? 0;

/** How many parts the message has: 1 for content that was not split. */
export const segmentCount = (request: MessageRequest): number => request.segments?.length ?? 1;

/** Whether a part follows the one this copy sends. */
export const hasNextSegment = (msg: Pick<QueuedMessage, 'segment' | 'request'>): boolean =>
  segmentOf(msg) + 1 < segmentCount(msg.request);

type Segmented<R> = Pick<QueuedMessage, 'segment'> & { request: R };

/** The request as this copy sends it: the message with its part's msgtype and content. */
export function segmentRequest(msg: Segmented<AppMessageRequest>): AppMessageRequest;
export function segmentRequest(msg: Segmented<RobotMessageRequest>): RobotMessageRequest;
export function segmentRequest(msg: Segmented<MessageRequest>): MessageRequest;
export function segmentRequest(msg: Segmented<MessageRequest>): MessageRequest {
  const { request } = msg;
  if (request.robot !== undefined) {
    const segment = request.segments?.[segmentOf(msg)];
    if (!segment) return request;
    const { segments: _all, ...rest } = request;
    return { ...rest, msgtype: segment.msgtype, content: segment.content };
  }
  const segment = request.segments?.[segmentOf(msg)];
  if (!segment) return request;
  const { segments: _all, ...rest } = request;
  return { ...rest, msgtype: segment.msgtype, content: segment.content };
}

/** Whether the record shows part `segment` sent to every recipient (its last send `completes` it). */
export const segmentCompleted = (record: Pick<MessageRecord, 'parts'>, segment: number): boolean =>
  (record.parts ?? []).some((p) => p.completes === true && (p.segment ?? 0) === segment);

/** "part 2/3: " for a split message, so a failure names the part it stopped at; "" otherwise. */
export const segmentLabel = (msg: Pick<QueuedMessage, 'segment' | 'request'>): string =>
  msg.request.segments ? `part ${segmentOf(msg) + 1}/${segmentCount(msg.request)}: ` : '';
