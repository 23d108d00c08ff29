// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} is DolphinScheduler's parameter syntax
/**
 * PYTHON tasks of a DolphinScheduler import: the report lists, per task, the modules its script
 * imports from outside Python 3.12's standard library (one line, with the pip command) and each
 * host and port written into it (one line each, localhost included), read from the script's
 * text by a tokenizer (no Python runs at import time): comments and strings are not code.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { convertDolphinScheduler } from "../../lib/import/dolphinscheduler/convert.js";
import { scanPythonScript } from "../../lib/import/dolphinscheduler/python-script.js";
import { PYTHON_STDLIB_MODULES } from "../../lib/import/dolphinscheduler/python-stdlib.js";
import { reportMarkdown } from "../../lib/import/dolphinscheduler/report.js";

const modules = (script: string) => scanPythonScript(script).imports.map((i) => i.module);
const hosts = (script: string) =>
  scanPythonScript(script).endpoints.map(
    (e) => `${e.host ?? "?"}${e.port === undefined ? "" : `:${e.port}`} @${e.line}`,
  );

describe("PYTHON task scripts: what the worker needs", () => {
  it("the report says, per task, what to install and which hosts to re-point", () => {
    const doc = JSON.parse(
      readFileSync(
        new URL("../fixtures/dolphinscheduler/pair/orders.json", import.meta.url),
        "utf8",
      ),
    );
    const c = convertDolphinScheduler(doc);
    const report = reportMarkdown(c, "orders.json");
    const wf = c.workflows[0] as (typeof c.workflows)[number];
    const w = wf.name;
    const tasks = wf.definition.tasks as Array<{ code: string; displayName?: string }>;
    const task = tasks.find((t) => t.displayName === "订单统计")?.code;
    const at = report.indexOf("## To do before running");
    const todo = report.slice(at, report.indexOf("\n## ", at + 1));
    expect(todo.split("\n").filter((l) => l.startsWith(`- \`${w}\` / \`${task}\`: `))).toEqual([
      `- \`${w}\` / \`${task}\`: the script imports modules outside Python's standard library: pandas, pyhive, numpy, requests: install them where the worker's python3 finds them (\`pip install pandas pyhive numpy requests\`; a module of your own goes beside the script), or the first run fails with ModuleNotFoundError`,
      `- \`${w}\` / \`${task}\`: connects to hive-server.prod.internal:10000 (line 9 of the script): check that the worker reaches it, or re-point it`,
      `- \`${w}\` / \`${task}\`: connects to alerts.prod.internal:8080 (line 12 of the script): check that the worker reaches it, or re-point it`,
    ]);
    // The python3 note is still there.
    expect(report).toContain("PYTHON task: a SHELL task that runs the script with python3");
  });

  it("imports: plain, dotted, aliased, several per line, from-imports, indented; stdlib and relative ones left out", () => {
    const script = [
      "from __future__ import annotations",
      "import os, sys, json",
      "import os.path as osp, pandas as pd, xml.etree.ElementTree as ET",
      "from sqlalchemy.engine import create_engine, text",
      "from . import helpers",
      "from .local import thing",
      "import distutils.core  # removed from the standard library in Python 3.12",
      "def load():",
      "    import pymysql",
      "    if fast: import ujson as json; import orjson",
      "    try:",
      "        from kafka import KafkaProducer",
      "    except ImportError:",
      "        pass",
      "    return importlib.import_module('boto3.session')",
      "import numpy",
      "from pandas import DataFrame",
    ].join("\n");
    expect(scanPythonScript(script).imports).toEqual([
      { module: "pandas", line: 3 },
      { module: "sqlalchemy", line: 4 },
      { module: "distutils", line: 7 },
      { module: "pymysql", line: 9 },
      { module: "ujson", line: 10 },
      { module: "orjson", line: 10 },
      { module: "kafka", line: 12 },
      { module: "boto3", line: 15 },
      { module: "numpy", line: 16 },
    ]);
  });

  it("comments, strings and docstrings are not code", () => {
    const script = [
      '"""',
      "import fake_in_docstring",
      '"""',
      "# import fake_in_comment",
      "print('import fake_in_string'); x = \"from fake import y\"",
      "sql = '''",
      "  from orders import rows",
      "'''",
      'msg = "a \\" import escaped"',
      "s = r'C:\\path\\'  # import after a raw string",
      "total = (1 +",
      "         2)  # import in a continued line's comment",
      "import real_one",
    ].join("\n");
    expect(scanPythonScript(script).imports).toEqual([{ module: "real_one", line: 13 }]);
  });

  it("hosts and ports: URLs, host=/port= arguments and assignments, dict entries, IPs, localhost", () => {
    const script = [
      "conn = hive.Connection(host='hive-server', port=10000, username='etl')",
      'engine = create_engine("mysql+pymysql://etl:secret@10.1.2.3:3306/dw")',
      'jdbc = "jdbc:hive2://hive.prod.internal:10000/default;auth=noSasl"',
      'ora = "jdbc:oracle:thin:@ora-db.corp:1521:ORCL"',
      'producer = KafkaProducer(bootstrap_servers="broker1:9092,broker2:9092")',
      'cache = {"host": "redis.internal", "port": 6379}',
      "db = pymysql.connect(host='localhost', port=3306)",
      'REDIS_HOST = "10.0.0.7"',
      "client = Client(port=8020)",
      'requests.get("https://api.example.com/v1/data?day=${biz_date}")',
      'url = "mongodb://m1:27017,m2:27017/db"',
      'requests.get("https://api.example.com/v1/other")',
    ].join("\n");
    expect(hosts(script)).toEqual([
      "hive-server:10000 @1",
      "10.1.2.3:3306 @2",
      "hive.prod.internal:10000 @3",
      "ora-db.corp:1521 @4",
      "broker1:9092 @5",
      "broker2:9092 @5",
      "redis.internal:6379 @6",
      "localhost:3306 @7",
      "10.0.0.7 @8",
      "?:8020 @9",
      "api.example.com @10",
      "m1:27017 @11",
      "m2:27017 @11",
    ]);
  });

  it("what is not a host: parameters, buckets, times, config keys, file names, formatted URLs", () => {
    const script = [
      'host = "${db_host}"',
      'path = "s3://bucket/daily/data.csv"',
      'at = "12:30"',
      'spark.conf.set("spark.sql.shuffle.partitions", "200")',
      'out = "report.xlsx"',
      'url = f"http://{host}:{port}/x"',
      'u2 = "http://%s:%d/x" % (h, p)',
      "# conn = connect(host='old-db.corp', port=1433)",
    ].join("\n");
    expect(hosts(script)).toEqual([]);
  });

  it("localhost is reported as the worker itself", () => {
    const doc = [
      {
        processDefinition: { name: "p", code: 1 },
        processTaskRelationList: [{ preTaskCode: 0, postTaskCode: 2 }],
        taskDefinitionList: [
          {
            code: 2,
            name: "py",
            taskType: "PYTHON",
            taskParams: { rawScript: "import redis\nr = redis.Redis(host='127.0.0.1', port=6379)" },
          },
        ],
      },
    ];
    const messages = convertDolphinScheduler(doc)
      .notes.filter((n) => n.kind === "action")
      .map((n) => n.message);
    expect(messages).toEqual([
      "the script imports modules outside Python's standard library: redis: install them where the worker's python3 finds them (`pip install redis`; a module of your own goes beside the script), or the first run fails with ModuleNotFoundError",
      "connects to 127.0.0.1:6379 (line 2 of the script): on a Shoal worker that is the worker itself; re-point it at the real host",
    ]);
  });

  it("the standard library list is Python 3.12's", () => {
    for (const m of ["os", "sys", "json", "tomllib", "zoneinfo", "__future__", "sqlite3"])
      expect(PYTHON_STDLIB_MODULES.has(m), m).toBe(true);
    // Removed in 3.12 (PEP 594 and 632): a worker's python3.12 has none of them.
    for (const m of ["distutils", "imp", "asyncore", "asynchat", "smtpd", "pandas"])
      expect(PYTHON_STDLIB_MODULES.has(m), m).toBe(false);
    expect(PYTHON_STDLIB_MODULES.size).toBe(301);
    expect(modules("import yaml, cv2\nfrom PIL import Image")).toEqual(["yaml", "cv2", "PIL"]);
  });
});
