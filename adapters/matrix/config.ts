/** The Matrix adapter's config, built from the `matrix:` section. */
import { ConfigError } from "../../core/errors.js";
import { type AdapterDeps, DEFAULT_MEDIA_MAX_BYTES } from "../../core/types.js";
import type { MatrixSection } from "./section.js";
import type { MatrixAdapterConfig } from "./types.js";

/**
 * The adapter config from the `matrix:` section and the media size cap. Invites are accepted from
 * MATRIX_ALLOWED_USERS and from whoever the gateway's own access decision admits (`deps.isAllowed`: the
 * global allowlist, GATEWAY_ALLOW_ALL_USERS, pairing approvals).
 * @throws ConfigError when the homeserver or the credentials are missing.
 */
export function matrixConfigFrom(
  section: MatrixSection,
  deps: Pick<AdapterDeps, "cacheDir" | "homeDir" | "mediaMaxBytes">,
): MatrixAdapterConfig {
  if (!section.homeserver)
    throw new ConfigError(
      "MATRIX_HOMESERVER",
      "MATRIX_HOMESERVER is not set. Fix: set it to your homeserver's URL.",
    );
  if (!section.accessToken && !(section.userId && section.password)) {
    throw new ConfigError(
      "MATRIX_ACCESS_TOKEN",
      "Matrix needs MATRIX_ACCESS_TOKEN or MATRIX_USER_ID + MATRIX_PASSWORD. Fix: set one of them.",
    );
  }
  return {
    homeserver: section.homeserver.replace(/\/+$/, ""),
    accessToken: section.accessToken,
    userId: section.userId,
    password: section.password,
    allowedUsers: section.allowedUsers,
    maxAttachmentBytes: deps.mediaMaxBytes ?? DEFAULT_MEDIA_MAX_BYTES,
    cacheDir: deps.cacheDir,
    stream: section.stream,
    encryption: section.encryption,
    storeKey: section.storeKey,
    homeDir: deps.homeDir,
  };
}
