/**
 * `mcp_servers:` in config.yaml: what a server entry becomes (names as written, the stdio child's
 * environment, bearer tokens and `${NAME}` from .env), errors naming the key and the fix, and the
 * toolsets a turn gets; the model-facing names and schemas of MCP tools.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanInputSchema, modelToolName } from "../../agent/tools/mcp/index.js";
import { toolsetsFor } from "../../app/toolsets.js";
import { configHome } from "../helpers/config-home.js";

const { load, configError: errorOf, homeDir } = configHome("herald-mcp-config-");

describe("mcp_servers config", () => {
  it("keeps server names and env names as written; the child env is the safe base plus its own", () => {
    const config = load(
      [
        "mcp_servers:",
        "  my_files:",
        "    command: npx",
        "    args: [server]",
        "    env:",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: config.yaml's own ${NAME} reference
        "      api_key: ${FILES_KEY}",
        "      PLAIN_VALUE: x",
        "    cwd: servers/files",
        "    timeout_s: 5",
        "    idle_timeout_s: 90",
        "    tools: { include: [read], exclude: [write] }",
        "    platforms: [telegram]",
      ].join("\n"),
      { PATH: "/usr/bin", HOME: "/home/h", OPENAI_API_KEY: "sk-secret", TELEGRAM_BOT_TOKEN: "1:abc" },
      { dotenv: "FILES_KEY=from-dotenv\n" },
    );
    expect(config.mcpServers).toEqual([
      {
        name: "my_files",
        transport: "stdio",
        command: "npx",
        args: ["server"],
        env: { PATH: "/usr/bin", HOME: "/home/h", api_key: "from-dotenv", PLAIN_VALUE: "x" },
        cwd: join(homeDir(), "servers/files"),
        enabled: true,
        timeoutMs: 5000,
        idleTimeoutMs: 90_000,
        include: ["read"],
        exclude: ["write"],
        platforms: ["telegram"],
        groups: false,
        access: "owners",
      },
    ]);
  });

  it("a remote server's bearer token comes from the variable bearer_token_env names", () => {
    const [server] = load(
      "mcp_servers:\n  gh:\n    url: https://mcp.example.com/mcp\n    bearer_token_env: GH_TOKEN\n    headers: { X-Team: core }\n",
      { GH_TOKEN: "ghp_123" },
    ).mcpServers;
    expect(server).toMatchObject({
      transport: "http",
      protocol: "auto",
      url: "https://mcp.example.com/mcp",
      headers: { "X-Team": "core", Authorization: "Bearer ghp_123" },
    });
  });

  it("errors name the key and the fix", () => {
    expect(errorOf("mcp_servers:\n  x:\n    args: [a]\n").message).toMatch(
      /config\.yaml: mcp_servers\.x is invalid: set either command .* or url/,
    );
    expect(errorOf("mcp_servers:\n  x:\n    command: a\n    timeout: 3\n").message).toContain(
      "unknown key 'mcp_servers.x.timeout'",
    );
    const missing = errorOf("mcp_servers:\n  gh:\n    url: https://h/mcp\n    bearer_token_env: GH_TOKEN\n");
    expect(missing.key).toBe("mcp_servers.gh.bearer_token_env");
    expect(missing.message).toContain("add GH_TOKEN=<token> to HERALD_HOME/.env");
    // biome-ignore lint/suspicious/noTemplateCurlyInString: config.yaml's own ${NAME} reference
    const ref = errorOf('mcp_servers:\n  x:\n    command: a\n    env: { K: "${NOPE}" }\n');
    expect(ref.key).toBe("mcp_servers.x.env.K");
    expect(errorOf("mcp_servers:\n  x:\n    command: a\n    headers: { A: b }\n").key).toBe(
      "mcp_servers.x.headers",
    );
    expect(errorOf("mcp_servers:\n  'bad name':\n    command: a\n").message).toContain("mcp_servers");
  });

  it("a turn gets the toolsets of the servers that serve its platform and chat type", () => {
    const config = load(
      [
        "mcp_servers:",
        "  a: { command: x }",
        "  b: { command: x, platforms: [telegram] }",
        "  c: { command: x, groups: true }",
        "  d: { command: x, enabled: false }",
      ].join("\n"),
    );
    const mcp = (platform: string, chatType: "dm" | "group") =>
      toolsetsFor(config, platform, chatType).filter((t) => t.startsWith("mcp"));
    expect(mcp("telegram", "dm")).toEqual(["mcp_a", "mcp_b", "mcp_c", "mcp"]);
    expect(mcp("api", "dm")).toEqual(["mcp_a", "mcp_c", "mcp"]);
    expect(mcp("telegram", "group")).toEqual(["mcp_c", "mcp"]);
    expect(toolsetsFor(load("timezone: UTC\n"), "api", "dm").some((t) => t.startsWith("mcp"))).toBe(false);
  });

  it("a server serves owners only unless its access says everyone", () => {
    const config = load(
      ["mcp_servers:", "  slack: { command: x }", "  docs: { command: x, access: everyone }"].join("\n"),
    );
    const mcp = (owner: boolean) =>
      toolsetsFor(config, "telegram", "dm", config.mcpServers, owner).filter((t) => t.startsWith("mcp"));
    expect(config.mcpServers.map((s) => s.access)).toEqual(["owners", "everyone"]);
    expect(mcp(true)).toEqual(["mcp_slack", "mcp_docs", "mcp"]);
    expect(mcp(false)).toEqual(["mcp_docs", "mcp"]);
    expect(errorOf("mcp_servers:\n  x: { command: a, access: friends }\n").key).toContain("access");
  });

  it("the ha toolset is an owner's unless ha.access says everyone", () => {
    const house = { HOMEASSISTANT_URL: "http://ha.local:8123", HOMEASSISTANT_TOKEN: "t" };
    const has = (config: ReturnType<typeof load>, owner: boolean) =>
      toolsetsFor(config, "telegram", "dm", [], owner).includes("ha");
    const owners = load("timezone: UTC\n", house);
    expect([has(owners, true), has(owners, false)]).toEqual([true, false]);
    const everyone = load("timezone: UTC\n", { ...house, HOMEASSISTANT_ACCESS: "everyone" });
    expect([has(everyone, true), has(everyone, false)]).toEqual([true, true]);
    expect(errorOf("ha:\n  access: friends\n").key).toMatch(/ACCESS|access/);
  });
});

describe("MCP tool names and schemas", () => {
  it("names follow the provider's rules and stay within 64 characters, distinct", () => {
    expect(modelToolName("everything", "get-env")).toBe("mcp_everything_get-env");
    expect(modelToolName("fs", "read.file v2")).toBe("mcp_fs_read_file_v2");
    const long1 = modelToolName("server", "x".repeat(80));
    const long2 = modelToolName("server", `${"x".repeat(79)}y`);
    expect(long1).toHaveLength(64);
    expect(long1).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(long1).not.toBe(long2);
  });

  it("root combinators OpenAI refuses are merged into the root's properties", () => {
    expect(
      cleanInputSchema({
        type: "object",
        properties: { id: { type: "string" } },
        allOf: [{ properties: { since: { type: "string" } }, required: ["since"] }],
        oneOf: [
          { properties: { path: { type: "string" }, mode: { type: "string" } }, required: ["path", "mode"] },
          { properties: { url: { type: "string" }, mode: { type: "string" } }, required: ["url", "mode"] },
        ],
      }),
    ).toEqual({
      type: "object",
      properties: {
        id: { type: "string" },
        since: { type: "string" },
        path: { type: "string" },
        mode: { type: "string" },
        url: { type: "string" },
      },
      required: ["since", "mode"],
    });
  });

  it("schemas become object schemas without $schema", () => {
    expect(cleanInputSchema({})).toEqual({ type: "object", properties: {} });
    expect(
      cleanInputSchema({
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        properties: { $schema: { type: "string" }, q: { type: "string", $comment: "x" } },
        required: ["q"],
      }),
    ).toEqual({
      type: "object",
      properties: { $schema: { type: "string" }, q: { type: "string" } },
      required: ["q"],
    });
  });
});
