/**
 * Builds the Shoal console (static files in console/dist) that `shoal standalone` serves at `/`.
 * `npm run build:console`; `npm run dev:console` serves it with hot reload and proxies `/v1` to a
 * standalone on SHOAL_ENDPOINT (default http://localhost:8080).
 */
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

const root = fileURLToPath(new URL(".", import.meta.url));
const endpoint = process.env.SHOAL_ENDPOINT ?? "http://localhost:8080";

export default defineConfig({
  root,
  base: "/",
  plugins: [react()],
  // The graph's chunk (React Flow and ELK, ~1.6 MB) loads only when the graph is shown.
  build: { outDir: "dist", emptyOutDir: true, sourcemap: true, chunkSizeWarningLimit: 2_000 },
  server: {
    proxy: {
      "/v1": {
        target: endpoint,
        // Standalone answers only its own Host, and writes only from its own pages (docs/api.md
        // "Authentication"): what this dev server's page sends is passed on as standalone's own
        // page would send it; another page's Origin is passed on as it is, and refused there.
        changeOrigin: true,
        configure: (proxy) => {
          proxy.on("proxyReq", (proxyReq, req) => {
            const origin = req.headers.origin;
            if (origin && URL.canParse(origin) && new URL(origin).host === req.headers.host) {
              proxyReq.setHeader("origin", new URL(endpoint).origin);
            }
          });
        },
      },
    },
  },
});
