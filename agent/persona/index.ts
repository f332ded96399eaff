/**
 * The persona: SOUL.md (who Herald is), `personalities/*.md` chosen per chat with `/personality`, and a
 * workspace's AGENTS.md, snapshotted into each session's system prompt.
 */
export { personalityCommands } from "./commands.js";
export { PersonaFiles } from "./files.js";
export { type AgentIdentity, createPersona, type Persona, type PersonaConfig } from "./gateway.js";
