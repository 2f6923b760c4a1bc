import { Pool, errors as undiciErrors } from 'undici';
import { WecomApiError, WecomTransportError } from './errors.js';

export interface WecomClientOptions {
  /** e.g. https://qyapi.weixin.qq.com (WECOM_API_BASE); may include a path prefix. */
  baseUrl: string;
  /** Upper bound on sockets per container: keeps pressure on WeCom predictable. */
  connections?: number;
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  /** Injected for tests (e.g. undici MockPool); default a keep-alive Pool. */
  dispatcher?: Pick<Pool, 'request' | 'close'>;
}

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

/** Port: the WeCom server API as the gateway uses it. */
export interface WecomApi {
  getToken(corpId: string, secret: string): Promise<TokenResponse>;
  send(accessToken: string, body: Record<string, unknown>): Promise<SendResponse>;
  recall(accessToken: string, msgid: string): Promise<void>;
  close(): Promise<void>;
}

/** Errors undici raises before any byte of the request could have reached WeCom. */
const NOT_SENT = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
]);

/**
 * WeCom client on one undici Pool per container: keep-alive, bounded connections, explicit connect / headers /
 * body timeouts. Access tokens travel in the query string as WeCom requires; they never reach a log line.
 *
 * @example const wecom = new WecomClient({ baseUrl: env.wecomApiBase }); await wecom.getToken(corpId, secret);
 */
export class WecomClient implements WecomApi {
  private readonly pool: Pick<Pool, 'request' | 'close'>;
  private readonly prefix: string;

  constructor(opts: WecomClientOptions) {
    const url = new URL(opts.baseUrl);
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.pool =
      opts.dispatcher ??
      new Pool(url.origin, {
        connections: opts.connections ?? 16,
        pipelining: 1,
        keepAliveTimeout: 30_000,
        connectTimeout: opts.connectTimeoutMs ?? 3_000,
        headersTimeout: opts.headersTimeoutMs ?? 5_000,
        bodyTimeout: opts.bodyTimeoutMs ?? 5_000,
      });
  }

  async getToken(corpId: string, secret: string): Promise<TokenResponse> {
    const query = new URLSearchParams({ corpid: corpId, corpsecret: secret });
    const res = await this.call<TokenResponse>('gettoken', 'GET', `/cgi-bin/gettoken?${query}`);
    // A token-less "success" must not be cached: it would never be fresh and every caller would fetch again.
    if (typeof res.access_token !== 'string' || !res.access_token || !(Number(res.expires_in) > 0)) {
      throw new WecomTransportError(
        'WeCom gettoken: answer without access_token/expires_in',
        'unknown',
        'BAD_BODY',
      );
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

  close(): Promise<void> {
    return this.pool.close();
  }

  private withToken(path: string, token: string): string {
    return `${path}?access_token=${encodeURIComponent(token)}`;
  }

  private async call<T>(api: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    let statusCode: number;
    let text: string;
    try {
      const res = await this.pool.request({
        method,
        path: `${this.prefix}${path}`,
        ...(body !== undefined
          ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json; charset=utf-8' } }
          : {}),
      });
      statusCode = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      const code = transportCode(err);
      throw new WecomTransportError(`WeCom ${api}: ${code}`, NOT_SENT.has(code) ? 'no' : 'unknown', code, {
        cause: err,
      });
    }
    if (statusCode >= 500 || statusCode === 429) {
      throw new WecomTransportError(`WeCom ${api}: HTTP ${statusCode}`, 'unknown', `HTTP_${statusCode}`);
    }
    let json: { errcode?: number; errmsg?: string } & Record<string, unknown>;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new WecomTransportError(
        `WeCom ${api}: HTTP ${statusCode}, body is not JSON`,
        'unknown',
        'BAD_BODY',
        {
          cause: err,
        },
      );
    }
    if (statusCode !== 200 && typeof json.errcode !== 'number') {
      // Not WeCom speaking (e.g. a 404 from a wrong WECOM_API_BASE): not worth retrying into the DLQ.
      throw new WecomApiError(40035, `HTTP ${statusCode} from ${api}: check WECOM_API_BASE`, api);
    }
    const errcode = typeof json.errcode === 'number' ? json.errcode : 0;
    if (errcode !== 0) throw new WecomApiError(errcode, String(json.errmsg ?? ''), api);
    return json as T;
  }
}

function transportCode(err: unknown): string {
  if (err instanceof undiciErrors.UndiciError) return (err as { code?: string }).code ?? err.name;
  if (err && typeof err === 'object' && 'code' in err && typeof err.code === 'string') return err.code;
  return err instanceof Error ? err.name : 'UNKNOWN';
}
