/**
 * `clarify`: the agent asks the user a question and ends its turn. The question is the turn's reply
 * (with its choices as buttons where the platform has them, numbered text elsewhere) and stays in the
 * session, so the user's answer, typed or clicked, starts the next turn with the question in context.
 * No slot is held while the user thinks.
 */
export { clarifyTool, MAX_CHOICES } from "./declaration.js";
