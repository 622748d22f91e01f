/**
 * Records the engine's golden digests (test/engine/golden-digests.json). Run after an INTENDED change of
 * engine behaviour, and explain each changed digest in the commit body (CONTRIBUTING.md, "The golden test").
 */
import { writeFileSync } from 'node:fs';
import { DEFAULT_PER_FLAVOUR, DIGESTS_FILE, runGolden } from '../test/engine/golden-run.js';

const { digests, reached } = runGolden(DEFAULT_PER_FLAVOUR);
writeFileSync(DIGESTS_FILE, `${JSON.stringify({ perFlavour: DEFAULT_PER_FLAVOUR, digests }, null, 0).replace(/,"/g, ',\n"')}\n`);
console.log(`recorded ${Object.keys(digests).length} streams`, reached);
