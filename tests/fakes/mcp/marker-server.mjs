// A stdio MCP server on the SDK that appends its pid to the file $MCP_MARK when it starts (so a test
// sees every start); its tools: `hello` answers with its pid, `add_tool` registers another tool at run
// time (the server then sends `notifications/tools/list_changed`), and `$EXTRA_TOOL`, when set, answers
// "extra".
import { appendFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

if (process.env.MCP_MARK) appendFileSync(process.env.MCP_MARK, `${process.pid}\n`);
const server = new McpServer({ name: "marker", version: "1.0.0" });
const text = (t) => ({ content: [{ type: "text", text: t }] });
server.registerTool(
  "hello",
  { description: "Says hello with the server's pid.", inputSchema: {} },
  async () => text(`hello from ${process.pid}`),
);
server.registerTool(
  "add_tool",
  {
    description: "Adds a tool named `name` that answers `answer`.",
    inputSchema: { name: z.string(), answer: z.string() },
  },
  async ({ name, answer }) => {
    server.registerTool(name, { description: `Says ${answer}.`, inputSchema: {} }, async () => text(answer));
    return text(`added ${name}`);
  },
);
if (process.env.EXTRA_TOOL)
  server.registerTool(process.env.EXTRA_TOOL, { description: "Answers extra.", inputSchema: {} }, async () =>
    text("extra"),
  );
await server.connect(new StdioServerTransport());
