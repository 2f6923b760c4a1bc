import { createHash, randomBytes } from 'node:crypto';
import { type ApiAnswer, apiAnswer as answer, ERRCODE } from './errcodes.js';
import { SimulatorConfigError } from './errors.js';
import type { SimReadings } from './readings.js';
import { type FormPart, validateRobotMessage } from './robot-validation.js';
import type { GroupMessage, SimGroup, SimRobot, SimRobotState } from './types.js';
import { WindowLog } from './windows.js';

/**
 * WeCom's side of group robots (消息推送, https://developer.work.weixin.qq.com/document/path/91770): each robot's key,
 * its group's inbox, its limit of 20 messages a minute and the media its upload_media gave. No HTTP here.
 *
 * The limit is counted under the `windows` reading like every other (fixed minutes, or every rolling minute); the
 * message over it is refused with 45009 (WeCom's answer to a frequency limit, as users report it for robots) and,
 * like an app's minute limit, blocks the robot for a minute from the hit.
 */

/** WeCom: "每个机器人发送的消息不能超过20条/分钟". */
export const DEFAULT_ROBOT_PER_MINUTE = 20;
/** WeCom: "该media_id仅三天内有效" (real days, like the recall window). */
export const ROBOT_MEDIA_TTL_MS = 3 * 86_400_000;
/** upload_media: "所有文件size必须大于5个字节"; file ≤20 MB; voice ≤2 MB, AMR only. */
const MIN_UPLOAD_BYTES = 6;
const MAX_UPLOAD_BYTES = { file: 20 * 1024 * 1024, voice: 2 * 1024 * 1024 } as const;
/** 93000 "机器人webhookurl不合法或者机器人已经被移除出群", 93004 "机器人被停用", 93008 "不在群里". */
export const ROBOT_ERRCODE = { invalidWebhook: 93000, disabled: 93004, notInGroup: 93008 } as const;
const STATE_ERRCODE: Readonly<Record<Exclude<SimRobotState, 'active'>, number>> = {
  removed: ROBOT_ERRCODE.invalidWebhook,
  disabled: ROBOT_ERRCODE.disabled,
  not_in_group: ROBOT_ERRCODE.notInGroup,
};

interface RobotEntry {
  robot: Required<Pick<SimRobot, 'key' | 'name'>> & { state: SimRobotState };
  inbox: GroupMessage[];
  refused: number;
}

interface Media {
  robotKey: string;
  type: 'file' | 'voice';
  filename: string;
  bytes: number;
  createdAt: number;
}

export interface RobotCounters {
  robotSendCalls: number;
  robotUploadCalls: number;
  /** Messages that reached a group. */
  robotDelivered: number;
}

export class Robots {
  readonly #byKey = new Map<string, RobotEntry>();
  readonly #minute: WindowLog;
  readonly #perMinute: number;
  readonly #minuteMs: number;
  readonly #blockedUntil = new Map<string, number>();
  readonly #media = new Map<string, Media>();
  readonly #inboxLimit: number;
  #counters: RobotCounters = { robotSendCalls: 0, robotUploadCalls: 0, robotDelivered: 0 };
  #seq = 0;

  constructor(
    robots: readonly SimRobot[],
    opts: { minuteMs: number; perMinute?: number; inboxLimit: number },
    private readonly readings: () => Readonly<SimReadings>,
  ) {
    this.#minuteMs = opts.minuteMs;
    this.#minute = new WindowLog(opts.minuteMs);
    this.#perMinute = opts.perMinute ?? DEFAULT_ROBOT_PER_MINUTE;
    this.#inboxLimit = opts.inboxLimit;
    for (const r of robots) this.add(r);
  }

  add(r: SimRobot): void {
    if (!r.key) throw new SimulatorConfigError('a robot needs a key');
    const existing = this.#byKey.get(r.key);
    // A change of state keeps the name (and the inbox) the robot has.
    const name =
      r.name ??
      existing?.robot.name ??
      `robot-${createHash('sha256').update(r.key).digest('hex').slice(0, 8)}`;
    this.#byKey.set(r.key, {
      robot: { key: r.key, name, state: r.state ?? existing?.robot.state ?? 'active' },
      inbox: existing?.inbox ?? [],
      refused: existing?.refused ?? 0,
    });
  }

  /** Sets a robot's state by name (`POST /__sim/robots`): what the group chat did to it. */
  setState(name: string, state: SimRobotState): SimGroup {
    const entry = [...this.#byKey.values()].find((e) => e.robot.name === name);
    if (!entry) throw new SimulatorConfigError(`no robot ${name}`, { name });
    entry.robot.state = state;
    return this.#groupOf(entry);
  }

  /** `webhook/send?key=`. */
  send(key: string | null, body: Record<string, unknown> | undefined, now: number): ApiAnswer {
    this.#counters.robotSendCalls++;
    const found = this.#admit(key);
    if ('answer' in found) return found.answer;
    const { entry } = found;
    if (body === undefined) return answer(ERRCODE.dataFormatError);
    const invalid = validateRobotMessage(body);
    if (invalid) return answer(invalid.errcode, invalid.detail);
    const msgtype = String(body.msgtype);
    const object = body[msgtype] as Record<string, unknown>;
    if (msgtype === 'file' || msgtype === 'voice') {
      const media = this.#media.get(String(object.media_id));
      // "media_id只能是对应上传文件的机器人可以使用": another robot's, or an expired one, is unknown here.
      if (!media || media.robotKey !== entry.robot.key || now - media.createdAt > ROBOT_MEDIA_TTL_MS)
        return answer(ERRCODE.invalidMediaId);
    }
    const refused = this.#admitMinute(entry.robot.key, now);
    if (refused) {
      entry.refused++;
      return refused;
    }
    const message: GroupMessage = {
      msgid: `robot_${(++this.#seq).toString(36)}_${randomBytes(6).toString('base64url')}`,
      msgtype,
      payload:
        msgtype === 'file' || msgtype === 'voice'
          ? { ...object, ...this.#mediaView(String(object.media_id)) }
          : object,
      receivedAt: now,
    };
    entry.inbox.push(message);
    if (entry.inbox.length > 2 * this.#inboxLimit)
      entry.inbox.splice(0, entry.inbox.length - this.#inboxLimit);
    this.#counters.robotDelivered++;
    return answer(ERRCODE.ok);
  }

  /** `webhook/upload_media?key=&type=`: one form part named `media`. */
  upload(key: string | null, type: string | null, parts: FormPart[] | undefined, now: number): ApiAnswer {
    this.#counters.robotUploadCalls++;
    const found = this.#admit(key);
    if ('answer' in found) return found.answer;
    if (type !== 'file' && type !== 'voice')
      return answer(ERRCODE.invalidParameter, 'type must be file or voice');
    const media = parts?.find((p) => p.name === 'media');
    if (!media) return answer(ERRCODE.emptyParameter, 'media'); // assumed
    const size = media.bytes.length;
    if (size < MIN_UPLOAD_BYTES || size > MAX_UPLOAD_BYTES[type])
      return answer(ERRCODE.invalidParameter, `${type} size ${size}`); // assumed
    if (type === 'voice' && media.bytes.subarray(0, 5).toString('latin1') !== '#!AMR')
      return answer(ERRCODE.invalidParameter, 'voice must be AMR'); // assumed
    const mediaId = `${(++this.#seq).toString(36)}${randomBytes(18).toString('base64url')}`;
    this.#media.set(mediaId, {
      robotKey: found.entry.robot.key,
      type,
      filename: media.filename ?? 'file',
      bytes: size,
      createdAt: now,
    });
    return answer(ERRCODE.ok, undefined, {
      type,
      media_id: mediaId,
      created_at: String(Math.floor(now / 1000)),
    });
  }

  /** Every robot's group, as the inspection API shows it (never its key). */
  groups(): SimGroup[] {
    return [...this.#byKey.values()].map((e) => this.#groupOf(e));
  }

  /** One robot's group inbox, oldest first; undefined for a robot the simulator does not know. */
  inbox(name: string): GroupMessage[] | undefined {
    const entry = [...this.#byKey.values()].find((e) => e.robot.name === name);
    return entry?.inbox.slice(-this.#inboxLimit).map((m) => ({ ...m }));
  }

  counters(): RobotCounters {
    return { ...this.#counters };
  }

  /** Forgets what WeCom remembers (inboxes, limits, media); the robots and their states stay. */
  reset(): void {
    for (const e of this.#byKey.values()) {
      e.inbox = [];
      e.refused = 0;
    }
    this.#minute.clear();
    this.#blockedUntil.clear();
    this.#media.clear();
    this.#counters = { robotSendCalls: 0, robotUploadCalls: 0, robotDelivered: 0 };
  }

  #admit(key: string | null): { entry: RobotEntry } | { answer: ApiAnswer } {
    const entry = key ? this.#byKey.get(key) : undefined;
    if (!entry) return { answer: answer(ROBOT_ERRCODE.invalidWebhook) };
    const state = entry.robot.state;
    return state === 'active' ? { entry } : { answer: answer(STATE_ERRCODE[state]) };
  }

  /** The robot's minute under the reading, and a minute's block after a refusal. */
  #admitMinute(key: string, now: number): ApiAnswer | undefined {
    const blocked = this.#blockedUntil.get(key);
    if (blocked !== undefined && now < blocked) return answer(ERRCODE.apiFreqOutOfLimit, 'robot blocked');
    if (this.#minute.used(key, now, this.readings()) >= this.#perMinute) {
      this.#blockedUntil.set(key, now + this.#minuteMs);
      return answer(ERRCODE.apiFreqOutOfLimit, 'robot minute limit');
    }
    this.#minute.add(key, now);
    return undefined;
  }

  #mediaView(mediaId: string): { filename?: string; size?: number } {
    const media = this.#media.get(mediaId);
    return media ? { filename: media.filename, size: media.bytes } : {};
  }

  #groupOf(e: RobotEntry): SimGroup {
    return {
      robot: e.robot.name,
      state: e.robot.state,
      messages: Math.min(e.inbox.length, this.#inboxLimit),
      refused: e.refused,
      lastAt: e.inbox.at(-1)?.receivedAt ?? null,
    };
  }
}
