/**
 * Both directions of Google Chat authentication, on `google-auth-library` (loaded when the adapter
 * starts). Inbound: Chat's bearer token is a JWT signed by `chat@system.gserviceaccount.com` for the
 * project number; `OAuth2Client` fetches that account's certificates from the configured URL (kept as
 * long as their Cache-Control allows) and checks signature, issuer, audience and expiry. Outbound: the
 * service account's JWT bearer grant (`JWT` client, scope `chat.bot`); the grant goes to the key's own
 * `token_uri` (the library posts to Google's fixed token URL, so a request interceptor on its
 * transporter sends it where the key says: Google's for real keys, a fake's in tests).
 */
import { readFile } from "node:fs/promises";
import type { JWT, OAuth2Client } from "google-auth-library";
import { ConfigError, PlatformError } from "../../core/errors.js";
import { type ServiceAccountKey, serviceAccountSchema } from "./types.js";

/** The account Chat signs its requests as. */
export const CHAT_ISSUER = "chat@system.gserviceaccount.com";
/** The scope of a Chat app acting as itself. */
export const CHAT_BOT_SCOPE = "https://www.googleapis.com/auth/chat.bot";
const LIBRARY_TOKEN_URL = "https://oauth2.googleapis.com/token";

/** Reads and checks a service-account key file. @throws ConfigError naming the key and the fix */
export async function readServiceAccount(path: string): Promise<ServiceAccountKey> {
  let raw: string;
  try {
    raw = await readFile(path, "utf8");
  } catch {
    throw new ConfigError(
      "GOOGLE_CHAT_SERVICE_ACCOUNT",
      `GOOGLE_CHAT_SERVICE_ACCOUNT names ${path}, which cannot be read. Fix: download a JSON key of the Chat app's service account (IAM → Service accounts → Keys) and give its path.`,
    );
  }
  let parsed: ReturnType<typeof serviceAccountSchema.safeParse>;
  try {
    parsed = serviceAccountSchema.safeParse(JSON.parse(raw));
  } catch {
    parsed = serviceAccountSchema.safeParse(undefined);
  }
  if (!parsed.success) {
    throw new ConfigError(
      "GOOGLE_CHAT_SERVICE_ACCOUNT",
      `${path} is not a service-account JSON key (client_email, private_key). Fix: create a JSON key of the service account and give its path.`,
    );
  }
  return parsed.data;
}

/** The app's access tokens, from the service account's JWT bearer grant. */
export async function chatCredentials(key: ServiceAccountKey): Promise<JWT> {
  const { JWT } = await import("google-auth-library");
  const client = new JWT({ email: key.client_email, key: key.private_key, scopes: [CHAT_BOT_SCOPE] });
  client.transporter.interceptors.request.add({
    resolved: async (options) => {
      if (String(options.url) === LIBRARY_TOKEN_URL) options.url = new URL(key.token_uri);
      return options;
    },
  });
  return client;
}

/** An access token. @throws PlatformError (auth_failed when the grant is refused) */
export async function accessToken(client: JWT): Promise<string> {
  try {
    const { token } = await client.getAccessToken();
    if (!token) throw new Error("no token in the answer");
    return token;
  } catch (err) {
    const status = (err as { status?: number; response?: { status?: number } }).response?.status;
    if (status === 400 || status === 401) {
      throw new PlatformError(
        "googlechat",
        "The token endpoint refused the service account's key (invalid_grant). Fix: create a new JSON key for the Chat app's service account and point GOOGLE_CHAT_SERVICE_ACCOUNT at it.",
        { code: "platform_auth_failed", cause: err },
      );
    }
    throw new PlatformError("googlechat", "Google's token endpoint did not answer.", {
      cause: err,
      retryable: true,
    });
  }
}

/** Checks Chat's bearer tokens against the published certificates. */
export class ChatTokenVerifier {
  private constructor(
    private readonly client: OAuth2Client,
    private readonly audience: string,
  ) {}

  static async create(certsUrl: string, audience: string): Promise<ChatTokenVerifier> {
    const { OAuth2Client } = await import("google-auth-library");
    return new ChatTokenVerifier(
      new OAuth2Client({ endpoints: { oauth2FederatedSignonPemCertsUrl: certsUrl } }),
      audience,
    );
  }

  /** @throws Error saying why the token does not check out */
  async verify(authorization: string | null): Promise<void> {
    const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1];
    if (!token) throw new Error("no bearer token");
    const { certs } = await this.client.getFederatedSignonCertsAsync();
    await this.client.verifySignedJwtWithCertsAsync(token, certs, this.audience, [CHAT_ISSUER]);
  }
}
