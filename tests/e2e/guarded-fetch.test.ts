/**
 * createGuardedFetch (plugins' `ctx.fetch`) over the wire against local echo servers on 127.0.0.1. The
 * refusals run under the default policy and prove the server saw no connection; the "allowed" cases
 * allow private addresses explicitly (there is no public address to reach from a test). Made-up host
 * names resolve through an injected lookup, which is the lookup each connection uses.
 */
import { Agent } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createGuardedFetch, WebError } from "../../agent/tools/web/index.js";
import { type EchoServer, startEchoServer } from "../fakes/web/echo.js";
import { fakeLookup } from "../fakes/web/lookup.js";

const HINT = "plugins may reach only public addresses unless allowed (test)";

let echo: EchoServer;
let other: EchoServer;
beforeAll(async () => {
  [echo, other] = await Promise.all([startEchoServer(), startEchoServer()]);
});
afterAll(() => Promise.all([echo.close(), other.close()]));
afterEach(() => echo.release());

async function refusal(promise: Promise<unknown>): Promise<WebError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WebError);
  expect((err as WebError).reason).toBe("blocked_address");
  return err as WebError;
}

describe("the default policy, checked at connect", () => {
  const guarded = createGuardedFetch({ hint: HINT });

  it("refuses 127.0.0.1 with the host, the address, why and how to allow it; the server sees nothing", async () => {
    const err = await refusal(guarded(`${echo.url}/secret`, { method: "POST", body: "x" }));
    expect(err.message).toBe(
      `refused ${echo.url}/secret: 127.0.0.1 is a loopback (127.0.0.0/8) address; ${HINT}`,
    );
    expect(err.url).toBe(`${echo.url}/secret`);
    expect(echo.connections()).toBe(0);
  });

  it("refuses IPv6 literals: loopback, IPv4-mapped loopback, unique-local", async () => {
    expect((await refusal(guarded(`http://[::1]:${echo.port}/`))).message).toContain(
      "::1 is a loopback (::1) address",
    );
    expect((await refusal(guarded(`http://[::ffff:127.0.0.1]:${echo.port}/`))).message).toContain(
      "::ffff:7f00:1 is a loopback (127.0.0.0/8), inside an IPv6 address; ",
    );
    expect((await refusal(guarded(`http://0x7f.1:${echo.port}/`))).message).toContain(
      "127.0.0.1 is a loopback (127.0.0.0/8) address",
    );
    expect((await refusal(guarded(`http://[fd00::1]:${echo.port}/`))).message).toContain("unique-local");
    expect((await refusal(guarded(`http://169.254.169.254/latest/meta-data`))).message).toContain(
      "169.254.169.254 is a link-local and cloud metadata (169.254.0.0/16) address",
    );
    expect(echo.connections()).toBe(0);
  });

  it("refuses a public-looking name that resolves to 127.0.0.1, asking the resolver at connect", async () => {
    const lookup = fakeLookup({ "api.example.com": ["127.0.0.1"] });
    const fetcher = createGuardedFetch({ hint: HINT, lookup });
    const err = await refusal(fetcher(`http://api.example.com:${echo.port}/data`));
    expect(err.message).toBe(
      `refused http://api.example.com:${echo.port}/data: api.example.com resolves to 127.0.0.1, ` +
        `a loopback (127.0.0.0/8) address; ${HINT}`,
    );
    expect(lookup.calls).toEqual(["api.example.com"]);
    expect(echo.connections()).toBe(0);
  });

  it("refuses a name with one public and one private address (the connection could pick either)", async () => {
    const fetcher = createGuardedFetch({
      hint: HINT,
      lookup: fakeLookup({ "mixed.example": ["93.184.215.14", "10.1.2.3"] }),
    });
    expect((await refusal(fetcher(`http://mixed.example:${echo.port}/`))).message).toContain(
      "mixed.example resolves to 10.1.2.3, a private (10.0.0.0/8) address",
    );
  });

  it("refuses `localhost` through the system resolver", async () => {
    const err = await refusal(guarded(`http://localhost:${echo.port}/`));
    expect(err.message).toMatch(
      /^refused http:\/\/localhost:\d+\/: localhost resolves to (127\.0\.0\.1|::1), a loopback/,
    );
    expect(echo.connections()).toBe(0);
  });

  it("ignores a dispatcher passed in init: the guarded one is used", async () => {
    const own = new Agent();
    const init = { dispatcher: own } as RequestInit;
    await refusal(guarded(`${echo.url}/bypass`, init));
    expect(echo.connections()).toBe(0);
    await own.close();
  });
});

describe("redirects", () => {
  // public.example resolves (injected) to the echo server's 127.0.0.1, and the policy allows exactly that
  // host name: the first hop is served, every other hop goes through the real check.
  const lookup = fakeLookup({ "public.example": ["127.0.0.1"], "internal.example": ["127.0.0.1"] });
  const fetcher = createGuardedFetch({
    hint: HINT,
    lookup,
    allowPrivate: ({ hostname }) => hostname === "public.example",
  });

  it("refuses the hop to a private IP literal; the allowed server answered, the target saw nothing", async () => {
    const target = `${other.url}/admin`;
    const start = `http://public.example:${echo.port}/redirect?to=${encodeURIComponent(target)}`;
    const before = echo.requests.length;
    const err = await refusal(fetcher(start));
    expect(err.message).toBe(
      `refused ${start} at a redirect: 127.0.0.1 is a loopback (127.0.0.0/8) address; ${HINT}`,
    );
    expect(echo.requests.slice(before).map((r) => r.path)).toEqual([
      `/redirect?to=${encodeURIComponent(target)}`,
    ]);
    expect(other.connections()).toBe(0);
  });

  it("refuses the hop to a name that resolves to a private address", async () => {
    const target = `http://internal.example:${other.port}/admin`;
    const start = `http://public.example:${echo.port}/redirect?to=${encodeURIComponent(target)}`;
    const err = await refusal(fetcher(start));
    expect(err.message).toContain("at a redirect: internal.example resolves to 127.0.0.1, a loopback");
    expect(other.connections()).toBe(0);
  });

  it("follows a redirect between allowed hosts", async () => {
    const start = `http://public.example:${echo.port}/redirect?to=/landing`;
    const res = await fetcher(start);
    expect(res.status).toBe(200);
    expect(res.redirected).toBe(true);
    expect(((await res.json()) as { path: string }).path).toBe("/landing");
  });
});

describe("allowed, it is a full fetch", () => {
  const open = createGuardedFetch({ hint: HINT, allowPrivate: true });

  it("sends any method, headers and body, and hands back the answer", async () => {
    const res = await open(`${echo.url}/items/7`, {
      method: "PATCH",
      headers: new Headers({ "content-type": "application/json", "x-plugin": "yes" }),
      body: JSON.stringify({ done: true }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      method: "PATCH",
      path: "/items/7",
      contentType: "application/json",
      body: '{"done":true}',
    });
    expect(echo.requests.at(-1)!.headers["x-plugin"]).toBe("yes");
  });

  it("takes the global Request and FormData, as code written for the global fetch passes them", async () => {
    const form = new FormData();
    form.append("field", "value");
    form.append("file", new File(["file body"], "a.txt", { type: "text/plain" }));
    await open(`${echo.url}/form`, { method: "POST", body: form });
    const sent = echo.requests.at(-1)!;
    expect(sent.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
    expect(sent.body).toContain('name="field"\r\n\r\nvalue');
    expect(sent.body).toContain('filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nfile body');

    const res = await open(new Request(`${echo.url}/req`, { method: "PUT", body: "from a Request" }));
    expect(await res.json()).toMatchObject({ method: "PUT", path: "/req", body: "from a Request" });
  });

  it("streams the response: the first chunk arrives before the server ends the body", async () => {
    const res = await open(`${echo.url}/stream`);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("first chunk;");
    echo.release();
    let rest = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      rest += new TextDecoder().decode(chunk.value);
    }
    expect(rest).toBe(" last chunk");
  });

  it("passes the host and the address it connects to to an allowPrivate function", async () => {
    const seen: string[] = [];
    const fetcher = createGuardedFetch({
      hint: HINT,
      lookup: fakeLookup({ "lan.example": ["127.0.0.1"] }),
      allowPrivate: ({ hostname, address }) => {
        seen.push(`${hostname}=${address}`);
        return true;
      },
    });
    expect((await fetcher(`http://lan.example:${echo.port}/`)).status).toBe(200);
    expect(seen).toEqual(["lan.example=127.0.0.1"]);
  });
});
