#!/usr/bin/env node
// `npx perpx …`: runs the TypeScript CLI through tsx's loader (no build step).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
