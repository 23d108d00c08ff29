/**
 * A version's definition as YAML (what `shoal apply` takes back), with Copy (to the clipboard)
 * and Download (`<name>-v<N>.yaml`).
 */
import { useMemo, useState } from "react";
import { definitionYaml } from "./definition-yaml";
import type { WorkflowDetail } from "./types";

export function YamlView({ definition }: { definition: WorkflowDetail }) {
  const text = useMemo(() => definitionYaml(definition), [definition]);
  const [copied, setCopied] = useState<string>();
  const file = `${definition.name}-v${definition.version}.yaml`;
  return (
    <section className="yaml" aria-label={`YAML of version ${definition.version}`}>
      <div className="controls">
        <button
          type="button"
          onClick={() =>
            navigator.clipboard.writeText(text).then(
              () => setCopied("copied"),
              (e: Error) => setCopied(`could not copy: ${e.message}`),
            )
          }
        >
          Copy
        </button>
        <button type="button" onClick={() => download(text, file)}>
          Download {file}
        </button>
        {copied ? (
          <span className="note" role="status">
            {copied}
          </span>
        ) : null}
      </div>
      <pre className="yaml-text">{text}</pre>
    </section>
  );
}

/** Saves `text` as `file` through a short-lived object URL (a data URL of a large definition would sit in the DOM). */
function download(text: string, file: string) {
  const url = URL.createObjectURL(new Blob([text], { type: "application/yaml" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = file;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1_000);
}
