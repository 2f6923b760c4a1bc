import { createHash } from 'node:crypto';
import { SingleFlight } from '#lib/util/index.js';
import type { RobotApi, RobotUpload } from './robot-client.js';

/**
 * Media ids of a group robot's uploads, so that a file or voice is uploaded once and its media id reused — by the
 * same message's retries and by any later message with the same bytes and name. WeCom keeps a media id 3 days and
 * lets only the robot that uploaded it send it ("该media_id仅三天内有效", "media_id只能是对应上传文件的机器人可以
 * 使用", path/91770), so entries are keyed by a fingerprint of the robot's key and reused for less than 3 days.
 */

/** WeCom keeps an uploaded medium this long. */
export const MEDIA_LIFETIME_MS = 3 * 86_400_000;
/** A media id is not reused this close to its end: the send it goes into may wait a little before it reaches WeCom. */
export const MEDIA_REUSE_MARGIN_MS = 3_600_000;

/** Which upload a media id stands for: the robot (by a fingerprint of its key, never the key) and the upload's digest. */
export interface MediaKey {
  robot: string;
  upload: string;
}

export interface StoredMedia {
  mediaId: string;
  /** When WeCom says it was uploaded (epoch ms). */
  uploadedAtMs: number;
}

/** Port: media ids shared by all sender containers (lib/store `DynamoMediaStore`). */
export interface MediaStore {
  get(key: MediaKey): Promise<StoredMedia | undefined>;
  put(key: MediaKey, media: StoredMedia): Promise<void>;
  /** Forgets the entry if it still holds `mediaId` (WeCom answered that it does not know it). */
  forget(key: MediaKey, mediaId: string): Promise<void>;
}

const sha256 = (...parts: (string | Uint8Array)[]): string => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\n');
  return hash.digest('hex');
};

/** The robot part of a {@link MediaKey}: a fingerprint of its key, so a new key (a new robot) uploads anew. */
export const robotFingerprint = (robotKey: string): string => sha256('robot', robotKey).slice(0, 32);

/** The media key of an upload by a robot. */
export const mediaKeyOf = (robotKey: string, upload: RobotUpload): MediaKey => ({
  robot: robotFingerprint(robotKey),
  upload: sha256(upload.type, upload.filename, upload.bytes),
});

export interface RobotMediaOptions {
  now?: () => number;
}

/**
 * The media id for an upload: this container's, the shared store's, or a new upload through the robot's
 * `upload_media`. Callers in one container that ask for the same upload at once share one upload.
 *
 * @example const { mediaId } = await media.mediaIdFor(robot.key, { type: 'file', filename: 'report.pdf', bytes });
 */
export class RobotMediaCache {
  private readonly local = new Map<string, StoredMedia>();
  private readonly flights = new SingleFlight<string, { mediaId: string; uploaded: boolean }>();
  private readonly now: () => number;

  constructor(
    private readonly store: MediaStore,
    private readonly api: Pick<RobotApi, 'upload'>,
    opts: RobotMediaOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** The media id, and whether this call uploaded it (false: reused). */
  async mediaIdFor(robotKey: string, upload: RobotUpload): Promise<{ mediaId: string; uploaded: boolean }> {
    const key = mediaKeyOf(robotKey, upload);
    const id = `${key.robot}#${key.upload}`;
    const mine = this.local.get(id);
    if (mine && this.usable(mine)) return { mediaId: mine.mediaId, uploaded: false };
    return this.flights.run(id, async () => {
      const shared = await this.store.get(key);
      if (shared && this.usable(shared)) {
        this.local.set(id, shared);
        return { mediaId: shared.mediaId, uploaded: false };
      }
      const media = await this.api.upload(robotKey, upload);
      const stored = { mediaId: media.mediaId, uploadedAtMs: media.createdAtMs };
      this.local.set(id, stored);
      await this.store.put(key, stored);
      return { mediaId: media.mediaId, uploaded: true };
    });
  }

  /** WeCom no longer knows the media id (40007): the next send of the upload uploads it again. */
  async forget(robotKey: string, upload: RobotUpload, mediaId: string): Promise<void> {
    const key = mediaKeyOf(robotKey, upload);
    this.local.delete(`${key.robot}#${key.upload}`);
    await this.store.forget(key, mediaId);
  }

  private usable(media: StoredMedia): boolean {
    return this.now() < media.uploadedAtMs + MEDIA_LIFETIME_MS - MEDIA_REUSE_MARGIN_MS;
  }
}
