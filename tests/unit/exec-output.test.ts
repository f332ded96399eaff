import { describe, expect, it } from "vitest";
import { HeadTailBuffer, RingLog } from "../../agent/exec/output.js";

describe("HeadTailBuffer", () => {
  it("keeps everything under the budget", () => {
    const buffer = new HeadTailBuffer(100);
    buffer.push("hello ");
    buffer.push("world");
    expect(buffer.text()).toBe("hello world");
    expect(buffer.droppedChars).toBe(0);
  });

  it("keeps the head and the tail across chunk boundaries and counts the dropped middle exactly", () => {
    const buffer = new HeadTailBuffer(20, 5);
    const input = "abcdefghijklmnopqrstuvwxyz0123456789";
    for (const ch of input.match(/.{1,7}/g) ?? []) buffer.push(ch);
    expect(buffer.droppedChars).toBe(input.length - 20);
    expect(buffer.text()).toBe(`abcde\n[… ${input.length - 20} characters dropped …]\n${input.slice(-15)}`);
  });
});

describe("RingLog", () => {
  it("reads by absolute offset and reports what the ring dropped", () => {
    const log = new RingLog(10);
    for (let i = 0; i < 5; i++) log.append("0123456789");
    expect(log.end).toBe(50);
    expect(log.firstKept).toBe(40);
    expect(log.read(0)).toEqual({ text: "0123456789", from: 40, skipped: 40 });
    expect(log.read(45, 3)).toEqual({ text: "567", from: 45, skipped: 0 });
    expect(log.read(50)).toEqual({ text: "", from: 50, skipped: 0 });
  });
});
