/** The simulator's inspection API as the inbox page uses it (local/wecom-sim/server.ts). Same origin. */
export interface Member {
  userid: string;
  inDirectory: boolean;
  messages: number;
  lastAt: number | null;
}

export interface ReceivedMessage {
  msgid: string;
  agentId: number;
  msgtype: string;
  payload: unknown;
  receivedAt: number;
  recalled: boolean;
  updates?: ({ at: number; replaceName: string } | { at: number; card: unknown })[];
}

export type TimelineItem =
  | { kind: 'message'; at: number; message: ReceivedMessage }
  | { kind: 'drop'; at: number; drop: { msgid: string; agentId: number; reason: string } }
  | {
      kind: 'duplicate';
      at: number;
      duplicate: { msgid: string; agentId: number; reading: string; intervalS: number; originalAt: number };
    }
  | {
      kind: 'undelivered';
      at: number;
      undelivered: { msgid?: string; agentId: number; msgtype: string; reason: string };
    };

export interface Timeline {
  userid: string;
  version: number;
  items: TimelineItem[];
}

export class SimApiError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SimApiError';
  }
}

async function call<T>(path: string, body?: unknown): Promise<T> {
  const res = await fetch(`/__sim/${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const json = (await res.json().catch(() => ({}))) as T & { error?: string };
  if (!res.ok) throw new SimApiError(json.error ?? `HTTP ${res.status}`);
  return json;
}

export const members = () => call<Member[]>('members');

/** A group robot's group (`GET /__sim/groups`): named by the robot, never by its key. */
export interface Group {
  robot: string;
  state: string;
  messages: number;
  refused: number;
  lastAt: number | null;
}

/** A message a robot posted to its group. */
export interface GroupMessage {
  msgid: string;
  msgtype: string;
  payload: unknown;
  receivedAt: number;
}

export const groups = () => call<Group[]>('groups');
/** Oldest first, as the simulator keeps them. */
export const groupInbox = (robot: string) => call<GroupMessage[]>(`groups/${encodeURIComponent(robot)}`);
export const timeline = (userid: string) => call<Timeline>(`timeline/${encodeURIComponent(userid)}`);

/** What `/__sim/click` and `/__sim/reply` answer: the app's callback URL's status and the attempts made. */
export interface Delivery {
  status: number;
  attempts: number;
}

export const click = (req: {
  userid: string;
  msgid: string;
  key: string;
  menu?: boolean;
  selected_items?: Record<string, string[]>;
}) => call<Delivery & { eventKey: string }>('click', req);

export const reply = (req: { userid: string; content: string; agentid?: number }) =>
  call<Delivery & { msgId: string }>('reply', req);
