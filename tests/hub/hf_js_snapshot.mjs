// The hub's official JavaScript client (@huggingface/hub, pinned in package-lock.json) as a peer
// of `voxserve models pull`: snapshotDownload of one repository into a hub cache folder.
//   node hf_js_snapshot.mjs HUB_URL OWNER/NAME CACHE_DIR   (prints the snapshot folder)
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(join(process.env.HUB_JS_DEPS, 'package.json'));
const { snapshotDownload } = require('@huggingface/hub');

const [hubUrl, name, cacheDir] = process.argv.slice(2);
console.debug = () => {};  // the client logs each download on debug
const folder = await snapshotDownload({ repo: { type: 'model', name }, cacheDir, hubUrl });
console.log(folder);
