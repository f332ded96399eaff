/** The Matrix adapter's config, built from the gateway's `HeraldConfig`. */

import type { HeraldConfig } from "../../app/config.js";
import { ConfigError } from "../../core/errors.js";
import type { AdapterDeps } from "../../core/types.js";
import type { MatrixAdapterConfig } from "./types.js";

/**
 * The adapter config from the gateway's config: the `matrix` section plus the invite allowlist
 * (`MATRIX_ALLOWED_USERS`, `matrix:`-prefixed `GATEWAY_ALLOWED_USERS`, `GATEWAY_ALLOW_ALL_USERS`).
 * @throws ConfigError when the homeserver or the credentials are missing.
 */
export function matrixConfigFrom(
  config: HeraldConfig,
  deps: Pick<AdapterDeps, "cacheDir">,
): MatrixAdapterConfig {
  const m = config.matrix;
  if (!m.homeserver)
    throw new ConfigError(
      "MATRIX_HOMESERVER",
      "MATRIX_HOMESERVER is not set. Fix: set it to your homeserver's URL.",
    );
  if (!m.accessToken && !(m.userId && m.password)) {
    throw new ConfigError(
      "MATRIX_ACCESS_TOKEN",
      "Matrix needs MATRIX_ACCESS_TOKEN or MATRIX_USER_ID + MATRIX_PASSWORD. Fix: set one of them.",
    );
  }
  const fromGateway = config.access.allowedUsers
    .filter((u) => u.startsWith("matrix:"))
    .map((u) => u.slice("matrix:".length));
  return {
    homeserver: m.homeserver.replace(/\/+$/, ""),
    accessToken: m.accessToken,
    userId: m.userId,
    password: m.password,
    allowedUsers: [...m.allowedUsers, ...fromGateway],
    allowAllUsers: config.access.allowAllUsers,
    maxAttachmentBytes: config.media.maxBytes,
    cacheDir: deps.cacheDir,
  };
}
