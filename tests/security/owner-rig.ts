/**
 * A whole gateway in-process for the owner tests: the fake Telegram in front, the scripted model
 * (`ModelPlan`) behind, the home channel 999 configured, and a plugins folder with the probe plugin
 * (plus any the test adds). `pair` admits a user by a pairing code over the wire.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, vi } from "vitest";
import { startFakeTelegram } from "../fakes/telegram/index.js";
import { startHarness } from "../helpers/gateway-harness.js";
import { HOME, ModelPlan, type PathContext } from "./owner-paths.js";

/** A plugin of the test's plugins folder: its capabilities and its `index.js`. */
export interface TestPlugin {
  capabilities: string[];
  source: string;
}

const PROBE: TestPlugin = {
  capabilities: ["send"],
  source: `
import { definePlugin, z } from "herald/plugin";
export default definePlugin({
  tools: [{ name: "probe_send", description: "send to this chat", parameters: z.object({ text: z.string() }),
    execute: async ({ text }, ctx) => { await ctx.send(text); return "sent"; } }],
});
`,
};

const temps: string[] = [];
afterAll(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A plugins folder with the probe plugin (capability `send`) and `more`. */
function pluginsDir(more: Record<string, TestPlugin>): string {
  const dir = mkdtempSync(join(tmpdir(), "herald-owner-"));
  temps.push(dir);
  for (const [name, plugin] of Object.entries({ probe: PROBE, ...more })) {
    mkdirSync(join(dir, name));
    writeFileSync(
      join(dir, name, "plugin.json"),
      JSON.stringify({ name, version: "0.1.0", capabilities: plugin.capabilities }),
    );
    writeFileSync(join(dir, name, "index.js"), plugin.source);
  }
  return dir;
}

export interface Rig extends PathContext {
  stop(): Promise<void>;
}

/** Starts the gateway; `me` is the user (and DM chat) the rig's paths act as. */
export async function startRig(
  me: number,
  env: Record<string, string>,
  options: { configYaml?: string; plugins?: Record<string, TestPlugin> } = {},
): Promise<Rig> {
  const fake = await startFakeTelegram();
  const model = new ModelPlan();
  const h = await startHarness({
    ...(options.configYaml ? { configYaml: options.configYaml } : {}),
    env: {
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_API_ROOT: fake.url,
      TELEGRAM_HOME_CHANNEL: String(HOME),
      HERALD_PLUGINS_DIR: pluginsDir(options.plugins ?? {}),
      HERALD_LEARNING_ENABLED: "false",
      ...env,
    },
  });
  h.llm.setDefault(model.answer);
  return {
    h,
    fake,
    model,
    me,
    async stop() {
      await h.stop();
      await fake.close();
    },
  };
}

/** Asks for a pairing code over the wire and approves it as `herald pairing approve <code>` does. */
export async function pair(rig: PathContext): Promise<void> {
  rig.fake.userSends({ chatId: rig.me, fromId: rig.me, text: "hello?" });
  await vi.waitFor(() => expect(rig.fake.botMessages(rig.me).at(-1)?.text).toMatch(/pairing code/), {
    timeout: 10_000,
  });
  const code = /code is ([A-Z0-9]{8})/.exec(rig.fake.botMessages(rig.me).at(-1)?.text ?? "")?.[1];
  expect(rig.h.state.pairing.approve(code!)).toEqual({ platform: "telegram", userId: String(rig.me) });
}
