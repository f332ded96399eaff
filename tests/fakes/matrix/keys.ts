/**
 * What end-to-end encryption needs of the fake homeserver, as Synapse serves it: device keys and
 * one-time/fallback keys (`/keys/upload`, `/keys/query`, `/keys/claim`), to-device messages
 * (`/sendToDevice`, delivered in `/sync` `to_device` once per device and kept until a later `since`
 * acknowledges them), `device_lists.changed` for users whose keys changed, and one-time key counts.
 * No key backup and no cross-signing: `/room_keys/version` answers 404 as on a server without backup.
 */
import type { RouteContext, RouteResult } from "./routes.js";

interface Device {
  keys: Record<string, unknown>;
  oneTimeKeys: Map<string, unknown>;
  fallbackKeys: Map<string, unknown>;
}

interface ToDevice {
  pos: number;
  userId: string;
  deviceId: string;
  event: { type: string; sender: string; content: unknown };
}

const ok = (json: unknown = {}): RouteResult => ({ status: 200, json });

/** Device keys, one-time keys and to-device queues of every user. */
export class KeyServer {
  /** userId → deviceId → keys. */
  readonly devices = new Map<string, Map<string, Device>>();
  readonly toDevice: ToDevice[] = [];
  /** userId → stream position of the last change to its device list. */
  readonly changed = new Map<string, number>();
  /** Users whose to-device messages are held back (a room key arriving after its message). */
  readonly held = new Set<string>();

  constructor(
    private readonly nextPos: () => number,
    private readonly onChange: () => void,
  ) {}

  private device(userId: string, deviceId: string): Device {
    let byUser = this.devices.get(userId);
    if (!byUser) {
      byUser = new Map();
      this.devices.set(userId, byUser);
    }
    let d = byUser.get(deviceId);
    if (!d) {
      d = { keys: {}, oneTimeKeys: new Map(), fallbackKeys: new Map() };
      byUser.set(deviceId, d);
    }
    return d;
  }

  /** `POST /keys/upload`. */
  upload(ctx: RouteContext): RouteResult {
    const { userId, deviceId } = ctx.user!;
    const d = this.device(userId, deviceId);
    const body = ctx.body as {
      device_keys?: Record<string, unknown>;
      one_time_keys?: Record<string, unknown>;
      fallback_keys?: Record<string, unknown>;
    };
    if (body.device_keys) {
      const existing = d.keys["keys"];
      if (existing && JSON.stringify(existing) !== JSON.stringify(body.device_keys["keys"])) {
        // Synapse refuses to change a device's identity keys.
        return { status: 400, json: { errcode: "M_INVALID_PARAM", error: "Device keys already uploaded" } };
      }
      d.keys = body.device_keys;
      this.changed.set(userId, this.nextPos());
    }
    for (const [id, key] of Object.entries(body.one_time_keys ?? {})) d.oneTimeKeys.set(id, key);
    if (body.fallback_keys) {
      d.fallbackKeys.clear();
      for (const [id, key] of Object.entries(body.fallback_keys)) d.fallbackKeys.set(id, key);
    }
    this.onChange();
    return ok({ one_time_key_counts: this.counts(userId, deviceId) });
  }

  counts(userId: string, deviceId: string): Record<string, number> {
    const d = this.devices.get(userId)?.get(deviceId);
    const counts: Record<string, number> = {};
    for (const id of d?.oneTimeKeys.keys() ?? []) {
      const algo = id.split(":")[0]!;
      counts[algo] = (counts[algo] ?? 0) + 1;
    }
    return counts;
  }

  /** `POST /keys/query`. */
  query(ctx: RouteContext): RouteResult {
    const wanted = (ctx.body["device_keys"] ?? {}) as Record<string, string[]>;
    const deviceKeys: Record<string, Record<string, unknown>> = {};
    for (const [userId, ids] of Object.entries(wanted)) {
      const out: Record<string, unknown> = {};
      for (const [deviceId, d] of this.devices.get(userId) ?? []) {
        if (d.keys["keys"] && (ids.length === 0 || ids.includes(deviceId))) out[deviceId] = d.keys;
      }
      deviceKeys[userId] = out;
    }
    return ok({ device_keys: deviceKeys, failures: {} });
  }

  /** `POST /keys/claim`: one one-time key per device, else its fallback key. */
  claim(ctx: RouteContext): RouteResult {
    const wanted = (ctx.body["one_time_keys"] ?? {}) as Record<string, Record<string, string>>;
    const result: Record<string, Record<string, Record<string, unknown>>> = {};
    for (const [userId, byDevice] of Object.entries(wanted)) {
      for (const [deviceId, algorithm] of Object.entries(byDevice)) {
        const d = this.devices.get(userId)?.get(deviceId);
        if (!d) continue;
        const pick = (keys: Map<string, unknown>, remove: boolean) => {
          for (const [id, key] of keys) {
            if (!id.startsWith(`${algorithm}:`)) continue;
            if (remove) keys.delete(id);
            return { [id]: key };
          }
          return undefined;
        };
        const key = pick(d.oneTimeKeys, true) ?? pick(d.fallbackKeys, false);
        if (key) {
          result[userId] ??= {};
          result[userId][deviceId] = key;
        }
      }
    }
    this.onChange();
    return ok({ one_time_keys: result, failures: {} });
  }

  /** `PUT /sendToDevice/{type}/{txnId}`; `*` as device id means every device of the user. */
  send(ctx: RouteContext, type: string): RouteResult {
    const messages = (ctx.body["messages"] ?? {}) as Record<string, Record<string, unknown>>;
    for (const [userId, byDevice] of Object.entries(messages)) {
      for (const [deviceId, content] of Object.entries(byDevice)) {
        const targets = deviceId === "*" ? [...(this.devices.get(userId)?.keys() ?? [])] : [deviceId];
        for (const target of targets) {
          this.toDevice.push({
            pos: this.nextPos(),
            userId,
            deviceId: target,
            event: { type, sender: ctx.user!.userId, content },
          });
        }
      }
    }
    this.onChange();
    return ok();
  }

  /**
   * The crypto part of a `/sync` for one device after `since` (undefined: initial sync): to-device
   * events not yet acknowledged, users whose device lists changed, one-time key counts.
   */
  syncPart(userId: string, deviceId: string, since: number | undefined) {
    const after = since ?? 0;
    // A sync with `since` acknowledges everything delivered up to it (nothing held was delivered).
    for (let i = this.held.has(userId) ? -1 : this.toDevice.length - 1; i >= 0; i--) {
      const m = this.toDevice[i]!;
      if (m.userId === userId && m.deviceId === deviceId && since !== undefined && m.pos <= since)
        this.toDevice.splice(i, 1);
    }
    const events = this.held.has(userId)
      ? []
      : this.toDevice
          .filter(
            (m) => m.userId === userId && m.deviceId === deviceId && (since === undefined || m.pos > after),
          )
          .map((m) => m.event);
    const changed = since === undefined ? [] : [...this.changed].filter(([, p]) => p > after).map(([u]) => u);
    return {
      to_device: { events },
      device_lists: { changed, left: [] },
      device_one_time_keys_count: this.counts(userId, deviceId),
      "org.matrix.msc2732.device_unused_fallback_key_types": this.fallbackTypes(userId, deviceId),
      device_unused_fallback_key_types: this.fallbackTypes(userId, deviceId),
      empty: events.length === 0 && changed.length === 0,
    };
  }

  /** Holds `userId`'s to-device messages back until `release(userId)`. */
  hold(userId: string): void {
    this.held.add(userId);
  }

  /** Delivers what was held (on the next sync, which this wakes). */
  release(userId: string): void {
    this.held.delete(userId);
    // Re-stamp the held messages so an incremental sync after them still carries them.
    for (const m of this.toDevice) if (m.userId === userId) m.pos = this.nextPos();
    this.onChange();
  }

  private fallbackTypes(userId: string, deviceId: string): string[] {
    const d = this.devices.get(userId)?.get(deviceId);
    return [...new Set([...(d?.fallbackKeys.keys() ?? [])].map((id) => id.split(":")[0]!))];
  }
}
