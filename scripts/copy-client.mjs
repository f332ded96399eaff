#!/usr/bin/env node
/**
 * Part of `npm run build`: the web chat's page files (`adapters/webchat/client/`, plain ES modules and a
 * stylesheet that need no compiling) go beside the compiled adapter in `dist/`, so a `dist/` on its own
 * (the Docker image) serves the page.
 */
import { cpSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

const root = resolve(dirname(new URL(import.meta.url).pathname), "..");
const from = join(root, "adapters", "webchat", "client");
const to = join(root, "dist", "adapters", "webchat", "client");
rmSync(to, { recursive: true, force: true });
cpSync(from, to, { recursive: true });
