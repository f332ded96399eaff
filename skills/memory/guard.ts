/**
 * Content checks for text that will enter a system prompt or a stored procedure (memory entries,
 * skills the agent writes): no secrets, and nothing that tries to instruct the system. Each check
 * returns a refusal phrased for the model (what is wrong and what to write instead), or undefined.
 */

/** Credential shapes, each with the label the refusal names (never the matched text itself). */
const SECRET_PATTERNS: readonly [label: string, pattern: RegExp][] = [
  ["an API key (sk-…)", /\bsk-[A-Za-z0-9_-]{20,}/],
  ["a Slack token (xox…-)", /\bxox[abpors]-[A-Za-z0-9-]{10,}/],
  ["a Slack app token (xapp-…)", /\bxapp-[A-Za-z0-9-]{10,}/],
  ["a Telegram bot token", /\b\d{8,10}:AA[A-Za-z0-9_-]{30,}/],
  ["an AWS access key (AKIA…)", /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/],
  ["a GitHub token (ghp_…)", /\bgh[pousr]_[A-Za-z0-9]{30,}/],
  ["a GitHub token (github_pat_…)", /\bgithub_pat_[A-Za-z0-9_]{40,}/],
  ["a Google API key (AIza…)", /\bAIza[0-9A-Za-z_-]{35}/],
  ["a private key (PEM)", /-----BEGIN [A-Z ]*PRIVATE KEY-----/],
  ["a JSON web token", /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/],
  [
    "a long key or token value",
    // A run of 24+ token characters with a digit in it, shortly after a word that names a secret.
    /\b(?:api[_ -]?key|access[_ -]?key|key|token|secret|password|passwd|bearer|credential)s?\b[^\n]{0,24}?(?=[A-Za-z0-9+/_-]*\d)[A-Za-z0-9+/_-]{24,}/i,
  ],
  ["a password", /\b(?:password|passwd|passphrase)\s*(?:is|:|=)\s*\S{4,}/i],
];

/** Phrases that address the system rather than record a fact. */
const INJECTION_PATTERNS: readonly [label: string, pattern: RegExp][] = [
  [
    "ignore previous instructions",
    /\b(?:ignore|disregard|forget|override)\b[^\n]{0,30}\b(?:previous|prior|above|earlier|all|any|your|system)\b[^\n]{0,20}\b(?:instructions?|prompts?|rules|guidelines|directives)\b/i,
  ],
  ["you are now", /\byou are now\b/i],
  ["system prompt", /\bsystem[ _-]?prompt\b/i],
  ["new instructions", /\bnew (?:instructions|rules|directives)\s*:/i],
  ["do not tell the user", /\b(?:do not|don't|never) (?:tell|inform|reveal to|show) the user\b/i],
  ["a role marker", /^\s*(?:system|assistant|developer)\s*:/im],
  [
    "a chat-template marker",
    /<\|(?:im_start|im_end|system|assistant|user)\|>|\[\/?INST\]|<\/?(?:system|instructions?)>/i,
  ],
  ["an instruction heading", /^\s*#{1,6}\s*(?:system|instructions?)\b/im],
];

/** Zero-width and direction-changing characters, which can hide text from a human reader. */
const INVISIBLE = /[\u200B-\u200F\u202A-\u202E\u2060-\u2064\uFEFF]/;

/** A refusal if `text` holds something shaped like a credential. */
export function findSecret(text: string): string | undefined {
  const hit = SECRET_PATTERNS.find(([, pattern]) => pattern.test(text));
  if (!hit) return undefined;
  return `refused: the text contains what looks like ${hit[0]}. Never store credentials; write where the secret lives instead (e.g. "the deploy token is in the CI settings").`;
}

/** A refusal if `text` tries to instruct the system (prompt injection) or hides characters. */
export function findInjection(text: string): string | undefined {
  if (INVISIBLE.test(text)) {
    return "refused: the text contains invisible (zero-width or direction) characters. Write it as plain visible text.";
  }
  const hit = INJECTION_PATTERNS.find(([, pattern]) => pattern.test(text));
  if (!hit) return undefined;
  return `refused: the text reads like an instruction to the system ("${hit[0]}"), not a note. Write facts and lessons in plain words, e.g. "The user prefers short answers".`;
}

/** Both checks: the first refusal, or undefined when the text may be stored and shown to the model. */
export function checkContent(text: string): string | undefined {
  return findSecret(text) ?? findInjection(text);
}
