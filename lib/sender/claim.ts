import { type QueuedMessage, SCHEDULED_GENERATION, UNCLAIMED_SEND_MS } from '#lib/model/index.js';
import { type ChannelAttempt, nowOf } from './types.js';

/**
 * The fence against a cancel (lib/model `changes.cancel`): right before calling WeCom, the copy holds the claim to
 * send on its record, or it stands down. Claimed once per attempt; a first receive of a copy of generation ≥ 1
 * claimed when it arrived. Only a fresh message's first copy within {@link UNCLAIMED_SEND_MS} of its acceptance goes
 * without: the hot path pays no write, and a cancel waits out that window (lib/ingest `cancelMessage`).
 */
export async function claimToSend(
  a: Pick<ChannelAttempt, 'deps' | 'msg' | 'incoming' | 'claim'>,
): Promise<boolean> {
  const { deps, msg, incoming: r } = a;
  if (a.claim.held) return true;
  const fresh = msg.generation === 0 && r.receiveCount === 1;
  if (fresh && nowOf(deps) < Date.parse(msg.createdAt) + UNCLAIMED_SEND_MS) return true;
  a.claim.held = await deps.messages.claimCopy(msg.id, msg.generation, { redelivery: r.receiveCount > 1 });
  return a.claim.held;
}

/**
 * The copy a message was accepted with: generation 0, or a scheduled message's first (its release). Its `sent` may be
 * recorded beside the record in the batch's one write: nothing but this copy can have moved the record since (a
 * scheduled copy holds the claim, so no cancel came between).
 */
export const isFirstCopy = (msg: QueuedMessage): boolean =>
  msg.generation === 0 || (msg.schedule !== undefined && msg.generation === SCHEDULED_GENERATION);
