/**
 * What the steps of `herald setup` share: the ask–check–keep loop of a platform's credentials
 * (`untilChecked`), running one live check, asking again after a failure, an id kept in config.yaml,
 * a secret kept from `.env`, an advanced URL, the owner on the allowlist, and one HTTP request to a
 * service whose failure says what was wrong (never with a secret in it).
 */
import type { DoctorLine } from "./settings.js";
import { CheckFailed, type StepContext } from "./setup.js";

/** How long a live check's request may take. */
export const CHECK_TIMEOUT_MS = 15_000;

/**
 * Runs a live check with a spinner. Interactive: a failure is shown and the user may try again
 * (`retry` asks the answers again) or skip (undefined). Non-interactive: a failure ends the run (the
 * files stay as they were).
 */
export async function checked<T>(
  ctx: StepContext,
  label: string,
  run: () => Promise<T>,
  describe: (value: T) => string,
): Promise<T | undefined> {
  const spin = ctx.p.spinner();
  spin.start(label);
  try {
    const value = await run();
    spin.stop(describe(value));
    return value;
  } catch (err) {
    spin.fail(`${label}: failed`);
    if (!(err instanceof CheckFailed)) throw err;
    if (!ctx.p.interactive) throw err;
    ctx.p.say("error", err.message);
    return undefined;
  }
}

/** Asks again after a failed check (interactive only). */
export async function tryAgain(ctx: StepContext, what: string): Promise<boolean> {
  if (!ctx.p.interactive) return false;
  return ctx.p.confirm({ key: "retry", message: `Enter the ${what} again? (No skips it)`, initial: true });
}

/**
 * A step's loop over a platform's credentials: `ask` gathers the answers (undefined: the step is
 * skipped, and `ask` said why), `check` runs them as a live check (`checked`) under `label`, `keep` writes the
 * answers the check accepted (and may ask more). After a failed check the user may enter them all
 * again (`tryAgain`, naming `retry`); else the step ends with nothing written. `ask`, `check` and
 * `keep` may throw: the wizard ends.
 */
export async function untilChecked<A, R>(
  ctx: StepContext,
  step: {
    ask: () => Promise<A | undefined>;
    /** The spinner's text while `check` runs. */
    label: string;
    check: (answers: A) => Promise<R>;
    /** What a passed check found, shown when the spinner stops. */
    describe: (result: R) => string;
    retry: string;
    keep: (answers: A, result: R) => Promise<void> | void;
  },
): Promise<void> {
  for (;;) {
    const answers = await step.ask();
    if (answers === undefined) return;
    const result = await checked(ctx, step.label, () => step.check(answers), step.describe);
    if (result === undefined) {
      if (await tryAgain(ctx, step.retry)) continue;
      return;
    }
    return step.keep(answers, result);
  }
}

/** Says why a step is skipped (a warning); `undefined`, the answer of an `ask` that gives up. */
export function skipped(ctx: StepContext, why: string): undefined {
  ctx.p.say("warn", why);
  return undefined;
}

/** A config.yaml value asked with its current value as the default; `path` is also the answer's key. */
export function askKept(ctx: StepContext, path: string, message: string): Promise<string | undefined> {
  return ctx.p.text({ key: path, message, initial: ctx.files.get(path) as string | undefined });
}

/** A secret's answer: its value, whether it is new (not the one in .env), and its .env name. */
export interface SecretAnswer {
  value: string | undefined;
  isNew: boolean;
  env: string;
}

/** A secret: the new answer, else the one in .env already. */
export async function secret(
  ctx: StepContext,
  key: string,
  env: string,
  message: string,
): Promise<SecretAnswer> {
  const current = ctx.files.env(env);
  const given = await ctx.p.password({ key, message, hasCurrent: Boolean(current) });
  return given ? { value: given, isNew: true, env } : { value: current, isNew: false, env };
}

/** Writes each new secret to .env under its name; one already there stays as it is. */
export function keepSecrets(ctx: StepContext, ...secrets: SecretAnswer[]): void {
  for (const s of secrets) if (s.isNew && s.value) ctx.files.setEnv(s.env, s.value);
}

/** An advanced URL (self-hosted server, proxy): the flag's, else config.yaml's, else `fallback`. */
export async function apiUrl(ctx: StepContext, key: string, path: string, fallback: string): Promise<string> {
  const current = (ctx.files.get(path) as string | undefined) ?? fallback;
  const given = await ctx.p.text({ key, message: "API URL", initial: current, advanced: true });
  return given ?? current;
}

/** Keeps an advanced URL in config.yaml only when it is not the default (or was there already). */
export function keepApiUrl(ctx: StepContext, path: string, url: string, fallback: string): void {
  if (url !== fallback || ctx.files.get(path) !== undefined) ctx.files.set(path, url);
}

/** Asks the owner's own user id on `platform` (key `<platform>.owner`), then `addOwner`. */
export async function askOwner(ctx: StepContext, platform: string, message: string): Promise<void> {
  return addOwner(ctx, platform, await ctx.p.text({ key: `${platform}.owner`, message }));
}

/** Puts the owner's own user id on the platform's allowlist, or says how others get in without one. */
export async function addOwner(ctx: StepContext, platform: string, id: string | undefined): Promise<void> {
  const owner = id?.trim();
  if (!owner) {
    ctx.p.say(
      "info",
      `No owner added for ${platform}: unknown users get a pairing code (\`herald pairing approve <code>\`).`,
    );
    return;
  }
  ctx.files.addToList(`${platform}.allowed_users`, [owner]);
  ctx.p.say("ok", `${platform}: ${owner} is on the allowlist.`);
}

/** A service's answer to a check: its status and its JSON body (`{ raw }` when it was not JSON). */
export interface ServiceAnswer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * One HTTP request of a live check. Any HTTP status is an answer.
 * @throws CheckFailed naming `what` and the origin when the service cannot be reached
 */
export async function callService(
  what: string,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number } = {},
): Promise<ServiceAnswer> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: init.method ?? "GET",
      headers: init.headers,
      body: init.body,
      signal: AbortSignal.timeout(init.timeoutMs ?? CHECK_TIMEOUT_MS),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? (err as Error).message;
    throw new CheckFailed(
      `Cannot reach ${what} at ${new URL(url).origin} (${reason}). Check the address and your network.`,
    );
  }
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    body = { raw: text.slice(0, 200) };
  }
  return { status: res.status, body };
}

/** A base URL without its trailing slashes. */
export const trimUrl = (url: string) => url.replace(/\/+$/, "");

/**
 * A `herald doctor` line of one live credential check (the one `herald setup` runs): `<name>: <what
 * passed>`, or `<name>: <failed>` with the check's own message and `hint` as the fix. Never throws.
 */
export async function credentialLine<T>(
  name: string,
  check: () => Promise<T>,
  passed: (value: T) => string,
  failed: string,
  hint: string,
): Promise<DoctorLine> {
  try {
    return { ok: true, text: `${name}: ${passed(await check())}` };
  } catch (err) {
    return { ok: false, text: `${name}: ${failed}`, fix: `${(err as Error).message} ${hint}` };
  }
}
