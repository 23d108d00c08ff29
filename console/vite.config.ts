/**
 * Builds the Shoal console (static files in console/dist) that `shoal standalone` serves at `/`.
 * `npm run build:console`; `npm run dev:console` serves it with hot reload and proxies `/v1` to a
 * standalone on SHOAL_ENDPOINT (default http://localhost:8080).
 */
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

const root = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  root,
  base: "/",
  plugins: [react()],
  // The graph's chunk (React Flow and ELK, ~1.6 MB) loads only when the graph is shown.
  build: { outDir: "dist", emptyOutDir: true, sourcemap: true, chunkSizeWarningLimit: 2_000 },
  server: {
    proxy: { "/v1": process.env.SHOAL_ENDPOINT ?? "http://localhost:8080" },
  },
});
