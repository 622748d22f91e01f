import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';

// The terminal imports the exchange's own pure modules (src/engine margin functions, src/signing schema,
// src/domain fixed-point) from the repository root, so the bundle computes exactly what the server does.
export default defineConfig({
  plugins: [react()],
  server: { fs: { allow: ['..'] }, proxy: { '/api': 'http://127.0.0.1:8080', '/auth': 'http://127.0.0.1:8080', '/connection': { target: 'ws://127.0.0.1:8080', ws: true } } },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1500 },
  test: { include: ['src/**/*.test.ts'], environment: 'node' },
});
