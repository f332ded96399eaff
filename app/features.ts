/**
 * The features with settings this build knows, one declaration each, living in the feature's folder: its
 * config section and env names, its rows of docs/configuration.md, its `herald doctor` checks and, where
 * it has one, its question in `herald setup`. Adding a feature's settings is its `settings.ts` plus one
 * line here: the config loader, setup, doctor and the reference page are built from this list.
 */
import { webhooksSettings } from "../adapters/webhooks/settings.js";
import { delegationSettings } from "../agent/delegate/settings.js";
import { execSettings } from "../agent/exec/settings.js";
import { learningSettings } from "../agent/learning/settings.js";
import { pluginsSettings } from "../agent/plugins/settings.js";
import { browserSettings } from "../agent/tools/browser/settings.js";
import { checkpointsSettings } from "../agent/tools/checkpoints/settings.js";
import { codeSettings } from "../agent/tools/code/settings.js";
import { haSettings } from "../agent/tools/ha/settings.js";
import { imagesSettings } from "../agent/tools/image/settings.js";
import { mcpServersSettings } from "../agent/tools/mcp/settings.js";
import { memoryProvidersSettings } from "../agent/tools/memory-providers/settings.js";
import { embeddingsSettings } from "../agent/tools/session-search/settings.js";
import { taskBoardSettings } from "../agent/tools/task-board/settings.js";
import { visionSettings } from "../agent/tools/vision/settings.js";
import { voiceSettings } from "../agent/tools/voice/settings.js";
import { webSettings } from "../agent/tools/web/settings.js";
import type { FeatureModule } from "../core/settings.js";
import { dashboardSettings } from "../gateway/dashboard/settings.js";
import { skillsSettings } from "../skills/settings.js";

/**
 * Every feature declaration, in the order of `herald doctor`, `herald setup`'s optional steps and the
 * reference page. The loaded config has each section under the feature's `key`.
 */
export const featureModules = [
  execSettings,
  checkpointsSettings,
  webSettings,
  voiceSettings,
  visionSettings,
  browserSettings,
  imagesSettings,
  codeSettings,
  haSettings,
  // The `memory:` section: the built-in files' budgets (skills/memory) and the external providers.
  memoryProvidersSettings,
  embeddingsSettings,
  learningSettings,
  skillsSettings,
  delegationSettings,
  taskBoardSettings,
  dashboardSettings,
  pluginsSettings,
  mcpServersSettings,
  webhooksSettings,
] as const;

type Features = (typeof featureModules)[number];

/** Each feature's section as the process uses it (after `resolve`), by key. */
export type FeatureConfig = {
  [F in Features as F["key"]]: ReturnType<NonNullable<F["resolve"]>>;
};

/** The list as the loader walks it (each module receives only its own section). */
export const features: readonly FeatureModule[] = featureModules;
