/**
 * Memory, skills and the learning loop on the gateway: the stores under `HERALD_HOME`, the system prompt
 * with its per-session snapshot, `/skills` and `/<skill>`, the background review after busy turns and
 * at session end (the reviewer itself is the agent's, agent/review.ts), the weekly curator, and the
 * `learning:` settings. A unit of its own so that the agent core knows no feature: this is where the
 * agent meets memory and skills.
 */
export {
  createLearning,
  type Learning,
  type LearningGateway,
  type LearningPorts,
  type LearningSettings,
  type LearningState,
  type LearningStateApis,
  type MemoryOwnerRule,
  memoryScope,
} from "./gateway.js";
export { learningSettings } from "./settings.js";
