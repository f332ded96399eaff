/**
 * The configured model of every process (the mains, `herald doctor`, `herald sessions show`): the
 * catalog of `providers:` and the model client on it, built by agent/configured-model.ts.
 */
export { createCatalog, createConfiguredModelClient } from "../agent/index.js";
