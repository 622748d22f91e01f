/** `npm run docs:links`: lists the broken links and paths in README.md, CONTRIBUTING.md and docs/, and docs pages cited in code that do not exist. */
import { brokenDocCitations, brokenReferences } from './docs/links.js';

const broken = [...brokenReferences(process.cwd()), ...brokenDocCitations(process.cwd())];
for (const b of broken) console.error(`${b.file}:${b.line}: ${b.target} (${b.reason})`);
if (broken.length > 0) process.exit(1);
console.log('documentation links: all resolve');
