// The baseline of scripts/bench-load.sh: walk a folder and read every
// markdown file into a string, nothing else. Prints {"files","bytes"}.
import fs from "node:fs";
import path from "node:path";

let files = 0;
let bytes = 0;
function walk(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith(".")) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full);
    else if (entry.isFile() && entry.name.endsWith(".md")) {
      bytes += fs.readFileSync(full, "utf8").length;
      files += 1;
    }
  }
}
walk(process.argv[2]);
console.log(JSON.stringify({ files, bytes }));
