// Parse every ```mermaid block of the Markdown files given as arguments with Mermaid's own parser.
// mermaid.parse needs a DOM (DOMPurify), so a jsdom window stands in for the browser.
// Prints one JSON line per block: {"file", "index", "ok", "error"}; exit 1 when any fails.
import { readFileSync } from "node:fs";
import { JSDOM } from "jsdom";

const dom = new JSDOM("<!doctype html><html><body></body></html>");
globalThis.window = dom.window;
globalThis.document = dom.window.document;
for (const key of ["Element", "HTMLElement", "Node", "DOMParser", "navigator"]) {
  if (!(key in globalThis)) globalThis[key] = dom.window[key];
}
const { default: mermaid } = await import("mermaid");
mermaid.initialize({ startOnLoad: false });

let failed = 0;
for (const file of process.argv.slice(2)) {
  const text = readFileSync(file, "utf8");
  const blocks = [...text.matchAll(/```mermaid\n([\s\S]*?)```/g)].map((m) => m[1]);
  for (const [index, block] of blocks.entries()) {
    try {
      await mermaid.parse(block);
      console.log(JSON.stringify({ file, index, ok: true }));
    } catch (err) {
      failed += 1;
      console.log(JSON.stringify({ file, index, ok: false, error: String(err && err.message || err) }));
    }
  }
}
process.exit(failed ? 1 : 0);
