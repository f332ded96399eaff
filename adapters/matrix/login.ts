/**
 * Who the bot is: an access token checked with `whoami`, or a password login whose token and device id
 * are kept in the adapter's store so every restart reuses the same device (a new device per start would
 * litter the account's device list and, with encryption, lose its keys).
 */
import { createClient, type MatrixClient } from "matrix-js-sdk";
import { PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { KeyValueStore } from "../../core/types.js";
import { httpFacts, toPlatformError } from "./errors.js";
import type { BotIdentity, MatrixAdapterConfig, StoredCredentials } from "./types.js";

const KEY = "credentials";

function readStored(kv: KeyValueStore, config: MatrixAdapterConfig): StoredCredentials | undefined {
  try {
    const raw = kv.get(KEY);
    const creds = raw ? (JSON.parse(raw) as StoredCredentials) : undefined;
    return creds && creds.homeserver === config.homeserver && creds.userId === config.userId
      ? creds
      : undefined;
  } catch {
    return undefined;
  }
}

function unreachable(err: unknown, config: MatrixAdapterConfig): PlatformError {
  const e = toPlatformError(err, `Connecting to MATRIX_HOMESERVER ${config.homeserver}`);
  return new PlatformError("matrix", `${e.message} Fix: check MATRIX_HOMESERVER (the client API base URL).`, {
    cause: err,
    retryable: e.retryable,
  });
}

async function whoami(
  config: MatrixAdapterConfig,
  accessToken: string,
): Promise<{ userId: string; deviceId?: string | undefined }> {
  const client = createClient({ baseUrl: config.homeserver, accessToken });
  const res = await client.whoami();
  return { userId: res.user_id, deviceId: res.device_id };
}

async function passwordLogin(
  config: MatrixAdapterConfig,
  deviceId: string | undefined,
): Promise<StoredCredentials> {
  const client: MatrixClient = createClient({ baseUrl: config.homeserver });
  try {
    const res = await client.loginRequest({
      type: "m.login.password",
      identifier: { type: "m.id.user", user: config.userId! },
      password: config.password!,
      ...(deviceId ? { device_id: deviceId } : {}),
      initial_device_display_name: config.deviceName ?? "Herald",
    });
    return {
      homeserver: config.homeserver,
      userId: res.user_id,
      accessToken: res.access_token,
      deviceId: res.device_id,
    };
  } catch (err) {
    const { status } = httpFacts(err);
    if (status === 403 || status === 401 || status === 400) {
      throw new PlatformError(
        "matrix",
        `MATRIX_USER_ID ${config.userId} could not log in to ${config.homeserver} (HTTP ${status}): the password was refused. Fix: check MATRIX_PASSWORD, or use MATRIX_ACCESS_TOKEN.`,
        { code: "platform_auth_failed", cause: err },
      );
    }
    throw unreachable(err, config);
  }
}

/**
 * Resolves the bot's identity, logging in with the password when needed.
 * @throws PlatformError naming the setting to fix (refused token or password, unreachable homeserver).
 */
export async function resolveIdentity(
  config: MatrixAdapterConfig,
  kv: KeyValueStore,
  log: Logger,
  options: { forceLogin?: boolean } = {},
): Promise<BotIdentity> {
  let accessToken: string;
  let userId: string;
  let deviceId: string | undefined;
  if (config.accessToken) {
    try {
      const me = await whoami(config, config.accessToken);
      ({ userId, deviceId } = me);
    } catch (err) {
      const { status, errcode } = httpFacts(err);
      if (status === 401 || errcode === "M_UNKNOWN_TOKEN") {
        throw new PlatformError(
          "matrix",
          `MATRIX_ACCESS_TOKEN was refused by ${config.homeserver} (${errcode ?? status}): the token was revoked or belongs to another server. Fix: create a new access token for the bot account, or set MATRIX_USER_ID + MATRIX_PASSWORD.`,
          { code: "platform_auth_failed", cause: err },
        );
      }
      throw unreachable(err, config);
    }
    if (config.userId && config.userId !== userId) {
      throw new PlatformError(
        "matrix",
        `MATRIX_ACCESS_TOKEN belongs to ${userId}, not MATRIX_USER_ID ${config.userId}. Fix: use the bot account's token or correct MATRIX_USER_ID.`,
        { code: "platform_auth_failed" },
      );
    }
    accessToken = config.accessToken;
  } else {
    if (!config.userId || !config.password) {
      throw new PlatformError(
        "matrix",
        "Matrix needs MATRIX_ACCESS_TOKEN or MATRIX_USER_ID + MATRIX_PASSWORD: set one of them.",
        {
          code: "platform_auth_failed",
        },
      );
    }
    let creds = options.forceLogin ? undefined : readStored(kv, config);
    if (creds) {
      try {
        await whoami(config, creds.accessToken);
      } catch (err) {
        const { status } = httpFacts(err);
        if (status !== 401) throw unreachable(err, config);
        log.info(
          { deviceId: creds.deviceId },
          "stored matrix token refused; logging in again on the same device",
        );
        creds = undefined;
      }
    }
    if (!creds) {
      const previous = readStored(kv, config)?.deviceId;
      creds = await passwordLogin(config, previous);
      kv.set(KEY, JSON.stringify(creds));
      log.info({ userId: creds.userId, deviceId: creds.deviceId }, "matrix password login stored");
    }
    ({ accessToken, userId, deviceId } = creds);
  }
  return { userId, deviceId, accessToken, displayName: await displayName(config, accessToken, userId) };
}

async function displayName(
  config: MatrixAdapterConfig,
  accessToken: string,
  userId: string,
): Promise<string | undefined> {
  try {
    const client = createClient({ baseUrl: config.homeserver, accessToken, userId });
    const profile = await client.getProfileInfo(userId, "displayname");
    return typeof profile.displayname === "string" && profile.displayname ? profile.displayname : undefined;
  } catch {
    return undefined;
  }
}
