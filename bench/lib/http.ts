import { Pool } from 'undici';

/** A parsed JSON response body; the metrics read the fields they need. */
// biome-ignore lint/suspicious/noExplicitAny: arbitrary JSON from the API under measurement
export type JsonBody = any;

export interface JsonResponse {
  status: number;
  body: JsonBody;
}

/** A small keep-alive JSON client for the gateway API (set-up calls, status reads); load goes through load.ts. */
export class ApiClient {
  readonly #pool: Pool;
  readonly #auth: Record<string, string>;

  constructor(baseUrl: string, apiKey: string, connections = 16) {
    this.#pool = new Pool(baseUrl, { connections, pipelining: 1, keepAliveTimeout: 10_000 });
    this.#auth = { authorization: `Bearer ${apiKey}` };
  }

  async post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> {
    return this.#call('POST', path, JSON.stringify(body), {
      ...this.#auth,
      'content-type': 'application/json',
      ...headers,
    });
  }

  async get(path: string): Promise<JsonResponse> {
    return this.#call('GET', path, undefined, this.#auth);
  }

  async #call(
    method: 'GET' | 'POST',
    path: string,
    body: string | undefined,
    headers: Record<string, string>,
  ): Promise<JsonResponse> {
    const res = await this.#pool.request({
      method,
      path,
      headers,
      ...(body !== undefined ? { body } : {}),
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}

/** The request body every throughput figure uses: a text alert of ~200 bytes to one member. */
export const ALERT_CONTENT =
  'CRITICAL disk usage 93% on db-primary-01 (/var/lib/postgresql). Threshold 90% for 5m. ' +
  'Runbook: https://wiki.example.com/runbooks/disk-full  Dashboard: https://grafana.example.com/d/abc';

export function textMessage(
  content: string,
  touser: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { app: 'ops', touser, msgtype: 'text', text: { content }, ...extra };
}
