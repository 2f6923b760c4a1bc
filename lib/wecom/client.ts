import { WecomApiError, WecomTransportError } from './errors.js';
import type { HttpTransport } from './transport.js';

export interface TokenResponse {
  access_token: string;
  expires_in: number;
}

export interface SendResponse {
  msgid: string;
  invaliduser?: string;
  invalidparty?: string;
  invalidtag?: string;
  unlicenseduser?: string;
  response_code?: string;
}

/** The contacts (通讯录) reads the gateway uses to learn whom a party, a tag or `@all` reaches (./contacts.ts). */
export type ContactsApiName = 'agent/get' | 'department/simplelist' | 'user/simplelist' | 'tag/get';

/** Port: the WeCom server API as the gateway uses it. */
export interface WecomApi {
  getToken(corpId: string, secret: string): Promise<TokenResponse>;
  send(accessToken: string, body: Record<string, unknown>): Promise<SendResponse>;
  recall(accessToken: string, msgid: string): Promise<void>;
  /** `message/update_template_card` (path/94945): the body carries the single-use response_code. */
  updateTemplateCard(accessToken: string, body: Record<string, unknown>): Promise<void>;
  /** A contacts read (GET with query parameters); WeCom's answer minus errcode/errmsg. */
  contacts(
    accessToken: string,
    api: ContactsApiName,
    query: Record<string, string>,
  ): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/**
 * The WeCom server API over a {@link HttpTransport}: typed requests and responses, errcode classification.
 * Access tokens travel in the query string as WeCom requires; they never reach a log line or an error message.
 *
 * @example const wecom = createUndiciWecomClient({ baseUrl: env.wecomApiBase }); await wecom.getToken(corpId, secret);
 */
export class WecomClient implements WecomApi {
  /** Shared with the group robots' client (./robot-client.ts): one pool of sockets to WeCom per container. */
  constructor(readonly transport: HttpTransport) {}

  async getToken(corpId: string, secret: string): Promise<TokenResponse> {
    const query = new URLSearchParams({ corpid: corpId, corpsecret: secret });
    const res = await this.call<TokenResponse>('gettoken', 'GET', `/cgi-bin/gettoken?${query}`);
    // A token-less "success" must not be cached: it would never be fresh and every caller would fetch again.
    if (typeof res.access_token !== 'string' || !res.access_token || !(Number(res.expires_in) > 0)) {
      throw new WecomTransportError('WeCom gettoken: answer without access_token/expires_in', 'BAD_BODY', {
        inDoubt: true,
      });
    }
    return { access_token: res.access_token, expires_in: Number(res.expires_in) };
  }

  async send(accessToken: string, body: Record<string, unknown>): Promise<SendResponse> {
    return this.call<SendResponse>(
      'message/send',
      'POST',
      this.withToken('/cgi-bin/message/send', accessToken),
      body,
    );
  }

  async recall(accessToken: string, msgid: string): Promise<void> {
    await this.call('message/recall', 'POST', this.withToken('/cgi-bin/message/recall', accessToken), {
      msgid,
    });
  }

  async updateTemplateCard(accessToken: string, body: Record<string, unknown>): Promise<void> {
    await this.call(
      'message/update_template_card',
      'POST',
      this.withToken('/cgi-bin/message/update_template_card', accessToken),
      body,
    );
  }

  async contacts(
    accessToken: string,
    api: ContactsApiName,
    query: Record<string, string>,
  ): Promise<Record<string, unknown>> {
    const params = new URLSearchParams({ access_token: accessToken, ...query });
    return this.call<Record<string, unknown>>(api, 'GET', `/cgi-bin/${api}?${params}`);
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  private withToken(path: string, token: string): string {
    return `${path}?access_token=${encodeURIComponent(token)}`;
  }

  private async call<T>(api: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const res = await this.transport.request({
      method,
      path,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return readAnswer<T>(api, res);
  }
}

/**
 * WeCom's answer to a call, or the error it stands for: no answer worth the name (HTTP 5xx or 429, a body that is not
 * JSON) is a transport error in doubt; a non-zero errcode a {@link WecomApiError}.
 */
export function readAnswer<T>(api: string, res: { statusCode: number; text: string }): T {
  const { statusCode, text } = res;
  if (statusCode >= 500 || statusCode === 429) {
    throw new WecomTransportError(`WeCom ${api}: HTTP ${statusCode}`, `HTTP_${statusCode}`, {
      inDoubt: true,
    });
  }
  let json: { errcode?: number; errmsg?: string } & Record<string, unknown>;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new WecomTransportError(`WeCom ${api}: HTTP ${statusCode}, body is not JSON`, 'BAD_BODY', {
      inDoubt: true,
      cause: err,
    });
  }
  if (statusCode !== 200 && typeof json.errcode !== 'number') {
    // Not WeCom speaking (e.g. a 404 from a wrong WECOM_API_BASE): not worth retrying into the DLQ.
    throw new WecomApiError(40035, `HTTP ${statusCode} from ${api}: check WECOM_API_BASE`, api);
  }
  const errcode = typeof json.errcode === 'number' ? json.errcode : 0;
  if (errcode !== 0) throw new WecomApiError(errcode, String(json.errmsg ?? ''), api);
  return json as T;
}
