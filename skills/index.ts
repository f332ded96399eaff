/**
 * Skills: SKILL.md folders (the bundled ones in `bundled/`, the user's under `HERALD_HOME/skills`),
 * their loading and validation, the store the skill tools and `herald skills` use, the prompt's skills
 * index, `/skills` and `/<skill>`, and the weekly curator.
 */
export { skillCommands } from "./commands.js";
export {
  type CurateOptions,
  type CurateReport,
  curateSkills,
  type Grade,
  type GradedSkill,
} from "./curator.js";
export { formatIssues } from "./issues.js";
export {
  bundledSkillsDir,
  fitsPlatform,
  frontmatterSchema,
  type LoadOptions,
  listSupportFiles,
  loadSkillDir,
  loadSkills,
  loadSkillsFrom,
  parseSkillMarkdown,
  SKILL_FILE,
  SKILL_NAME,
  SUPPORT_DIRS,
} from "./loader.js";
export { skillsPromptSection, skillTurnInput } from "./prompt.js";
export {
  describeFetched,
  diffInstalled,
  type FetchedSkill,
  fetchSkill,
  installFetched,
  type RemoteSkillOptions,
  type SkillSourceRecord,
  SkillSources,
} from "./remote.js";
export { SkillFetchError, unpackTarGz, unpackZip } from "./remote-fetch.js";
export {
  type IndexedSkill,
  type RemoteSkillsPort,
  searchIndexes,
  searchRemoteSkills,
} from "./remote-index.js";
export { describeSource, parseSkillSource, type RemoteSource } from "./remote-source.js";
export { FileSkillStore, type FileSkillStoreOptions, type SkillUsage } from "./store.js";
export type * from "./types.js";
export {
  checkFileText,
  checkName,
  checkSkillText,
  MAX_FILE_CHARS,
  MAX_SKILL_CHARS,
  resolveSupportPath,
} from "./validate.js";
