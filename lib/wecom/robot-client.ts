import { randomBytes } from 'node:crypto';
import { readAnswer } from './client.js';
import { WecomTransportError } from './errors.js';
import type { HttpTransport } from './transport.js';

/** What a group robot uploads through its `upload_media`: a file, or an AMR voice. */
export interface RobotUpload {
  type: 'file' | 'voice';
  /** The name the group sees (the form's `filename`). */
  filename: string;
  bytes: Uint8Array;
}

/** An uploaded medium: valid 3 days, for the robot that uploaded it only. */
export interface RobotMedia {
  mediaId: string;
  /** When WeCom says it was uploaded (epoch ms). */
  createdAtMs: number;
}

/**
 * Port: a group robot's webhook API (消息推送, https://developer.work.weixin.qq.com/document/path/91770). The key is
 * the robot's only credential; it travels in the query string, as WeCom requires, and never reaches a log line or
 * an error message.
 */
export interface RobotApi {
  /** `webhook/send`: posts the message to the robot's group chat. */
  send(key: string, body: Record<string, unknown>): Promise<void>;
  /** `webhook/upload_media`: a file or voice the robot can then send by its media id. */
  upload(key: string, upload: RobotUpload): Promise<RobotMedia>;
}

/** The API names errors carry (`WeCom webhook/send errcode 93000: …`): never the path, which holds the key. */
const SEND = 'webhook/send';
const UPLOAD = 'webhook/upload_media';

/**
 * The robot API over a {@link HttpTransport} (the app client's, so both share one pool of sockets).
 *
 * @example await new RobotClient(wecom.transport).send(key, { msgtype: 'text', text: { content: 'disk full' } });
 */
export class RobotClient implements RobotApi {
  constructor(private readonly transport: HttpTransport) {}

  async send(key: string, body: Record<string, unknown>): Promise<void> {
    const res = await this.transport.request({
      method: 'POST',
      path: `/cgi-bin/webhook/send?key=${encodeURIComponent(key)}`,
      body: JSON.stringify(body),
    });
    readAnswer(SEND, res);
  }

  async upload(key: string, upload: RobotUpload): Promise<RobotMedia> {
    const form = multipartMedia(upload);
    const res = await this.transport.request({
      method: 'POST',
      path: `/cgi-bin/webhook/upload_media?key=${encodeURIComponent(key)}&type=${upload.type}`,
      body: form.body,
      contentType: form.contentType,
    });
    const answer = readAnswer<{ media_id?: unknown; created_at?: unknown }>(UPLOAD, res);
    if (typeof answer.media_id !== 'string' || answer.media_id === '') {
      // An upload delivers nothing to the group: doing it again is harmless.
      throw new WecomTransportError(`WeCom ${UPLOAD}: answer without media_id`, 'BAD_BODY', {
        inDoubt: false,
      });
    }
    const created = Number(answer.created_at);
    return { mediaId: answer.media_id, createdAtMs: Number.isFinite(created) ? created * 1000 : Date.now() };
  }
}

/**
 * The form WeCom reads an upload from: one part named `media`, with `filename` and `filelength` ("form-data中媒体文件
 * 标识,应包含有 filename、filelength、content-type等信息"). The name goes as UTF-8, as browsers send it.
 */
export function multipartMedia(upload: RobotUpload): { body: Uint8Array; contentType: string } {
  const boundary = `----wecom-gateway-${randomBytes(12).toString('hex')}`;
  const head =
    `--${boundary}\r\n` +
    `Content-Disposition: form-data; name="media"; filename="${upload.filename}"; filelength=${upload.bytes.length}\r\n` +
    'Content-Type: application/octet-stream\r\n\r\n';
  const body = Buffer.concat([
    Buffer.from(head, 'utf8'),
    upload.bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}
