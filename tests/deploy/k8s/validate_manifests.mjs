// deploy/k8s offline: every kustomization (the base and each overlay) is
// rendered with `kubectl kustomize` and every object validated against the
// Kubernetes API's schemas (kubernetes-models); the TFJob example's
// replicas against the TFJob v1 fields and their pod templates against the
// PodTemplate schema. Then what a schema cannot see: the roles find each
// other (the coordinator's DNS name and port, the headless Service), the
// job's sizes match the Jobs', exit 75 is "preempted, resumable" for every
// Job, volumes and Prometheus annotations point at what exists, and every
// command line parses with the real binaries (BIN_DIR/lockstep-* ... --help).
//   node validate_manifests.mjs SOURCE_DIR BIN_DIR
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";

const [src, bin] = process.argv.slice(2);
if (!src || !bin) throw new Error("usage: validate_manifests.mjs SOURCE_DIR BIN_DIR");
const k8s = join(src, "deploy", "k8s");
let failures = 0;
const fail = (where, what) => {
  failures += 1;
  console.error(`FAIL ${where}: ${what}`);
};

// The kubernetes-models class of an object: kubernetes-models/<group>/<version>.
async function modelOf(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : [null, apiVersion];
  const module = await import(group ? `kubernetes-models/${group}/${version}` : `kubernetes-models/${version}`);
  if (!module[kind]) throw new Error(`no schema for ${apiVersion} ${kind}`);
  return module[kind];
}

async function validate(where, object) {
  try {
    const Model = await modelOf(object.apiVersion, object.kind);
    new Model(object).validate();
  } catch (e) {
    fail(where, e.message.split("\n").slice(0, 3).join(" "));
  }
}

// "exec lockstep-x --a b $VAR" (sh -c) or command + args: the argv, with
// $VARS expanded from the container's env values.
function argvOf(container) {
  const env = Object.fromEntries((container.env || []).filter((e) => "value" in e).map((e) => [e.name, String(e.value)]));
  let argv = [...(container.command || []), ...(container.args || [])];
  if (argv[0] === "/bin/sh" && argv[1] === "-c") {
    const line = argv[2].replace(/\$([A-Z_]+)/g, (_, name) => env[name] ?? "");
    argv = line.trim().split(/\s+/);
    if (argv[0] === "exec") argv.shift();
  }
  return argv;
}

function flag(argv, name) {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === name) return argv[i + 1];
    if (argv[i].startsWith(name + "=")) return argv[i].slice(name.length + 1);
  }
  return undefined;
}

// The real binary accepts these flags (it parses them before --help).
function parses(where, argv) {
  const binary = argv[0];
  if (!/^lockstep-(coordinator|server|worker)$/.test(binary)) {
    fail(where, `runs ${binary}, not a Lockstep binary`);
    return;
  }
  try {
    execFileSync(join(bin, binary), [...argv.slice(1), "--help"], { stdio: "pipe" });
  } catch (e) {
    fail(where, `${argv.join(" ")}: ${String(e.stderr).trim()}`);
  }
}

function podsOf(objects) {
  return objects.filter((o) => o.kind === "Job").map((job) => ({ job, pod: job.spec.template, container: job.spec.template.spec.containers[0] }));
}

function checkJob(where, objects) {
  const service = objects.find((o) => o.kind === "Service");
  const claims = new Set(objects.filter((o) => o.kind === "PersistentVolumeClaim").map((o) => o.metadata.name));
  const pods = podsOf(objects);
  const role = (name) => pods.find((p) => argvOf(p.container)[0] === `lockstep-${name}`);
  const coordinator = role("coordinator");
  const servers = role("server");
  const workers = role("worker");
  if (!coordinator || !servers || !workers) return fail(where, "needs a coordinator, a server and a worker Job");
  if (!service || service.spec.clusterIP !== "None") fail(where, "the Service is not headless");
  const cArgv = argvOf(coordinator.container);
  const port = (flag(cArgv, "--listen") || "").split(":").pop();
  const dns = `tcp://${coordinator.job.metadata.name}-0.${service.metadata.name}:${port}`;
  if (!service.spec.ports.some((p) => String(p.port) === port)) fail(where, `the Service has no port ${port}`);
  for (const { job, pod, container } of pods) {
    const at = `${where} ${job.metadata.name}`;
    const argv = argvOf(container);
    parses(at, argv);
    if (pod.spec.subdomain !== service.metadata.name) fail(at, "its pods are not in the Service's subdomain");
    for (const [k, v] of Object.entries(service.spec.selector)) {
      if (pod.metadata.labels?.[k] !== v) fail(at, `its pods lack the Service's selector ${k}=${v}`);
    }
    if (job.spec.completionMode !== "Indexed") fail(at, "is not an Indexed Job (ranks come from the index)");
    if (pod.spec.restartPolicy !== "Never") fail(at, "a pod failure policy needs restartPolicy Never");
    const resumable = (job.spec.podFailurePolicy?.rules || []).some((r) => r.action === "Ignore" && r.onExitCodes?.operator === "In" && r.onExitCodes.values.includes(75));
    if (!resumable) fail(at, "exit 75 (preempted, resumable) would count as a failure");
    if ((pod.spec.terminationGracePeriodSeconds ?? 30) < 26) fail(at, "the grace period is shorter than a role's 25 s wait for the coordinator");
    if (job !== coordinator.job) {
      const env = Object.fromEntries((container.env || []).map((e) => [e.name, e]));
      if (env.LOCKSTEP_COORDINATOR?.value !== dns) fail(at, `LOCKSTEP_COORDINATOR is ${env.LOCKSTEP_COORDINATOR?.value}, the coordinator is ${dns}`);
      if (env.POD_IP?.valueFrom?.fieldRef?.fieldPath !== "status.podIP") fail(at, "POD_IP is not the pod's IP");
    }
    // Security is on: each pod reads its own role's key, and only that,
    // from the Secret lockstep-keys.
    const role = { "lockstep-coordinator": "coordinator", "lockstep-server": "server", "lockstep-worker": "worker" }[argv[0]];
    const keysEnv = (container.env || []).find((e) => e.name === "LOCKSTEP_KEYS");
    const keyVolume = (pod.spec.volumes || []).find((v) => v.secret?.secretName === "lockstep-keys");
    const mounted = (container.volumeMounts || []).find((m) => m.name === keyVolume?.name);
    if (!keysEnv || !keyVolume || !mounted || mounted.mountPath !== keysEnv.value) fail(at, "its pods do not mount the Secret lockstep-keys at $LOCKSTEP_KEYS");
    else if ((keyVolume.secret.items || []).map((i) => i.key).join() !== `${role}.key`) fail(at, `its pods get ${(keyVolume.secret.items || []).map((i) => i.key).join() || "every key"}, not just ${role}.key`);
    for (const v of pod.spec.volumes || []) {
      if (v.persistentVolumeClaim && !claims.has(v.persistentVolumeClaim.claimName)) fail(at, `claims ${v.persistentVolumeClaim.claimName}, which is not rendered`);
    }
  }
  if (String(servers.job.spec.completions) !== flag(cArgv, "--servers")) fail(where, `--servers ${flag(cArgv, "--servers")} but ${servers.job.spec.completions} server pods`);
  // The worker Job starts --workers pods; scaled, it stays within
  // --max-workers (0: --workers).
  const most = Math.max(Number(flag(cArgv, "--workers")), Number(flag(cArgv, "--max-workers") ?? 0));
  if (workers.job.spec.completions !== Number(flag(cArgv, "--workers")) || most > 4096) {
    fail(where, `${workers.job.spec.completions} worker pods for --workers ${flag(cArgv, "--workers")}`);
  }
  const note = coordinator.pod.metadata.annotations || {};
  const metricsPort = (flag(cArgv, "--metrics-listen") || "").split(":").pop();
  if (note["prometheus.io/scrape"] !== "true" || note["prometheus.io/port"] !== metricsPort) fail(where, `Prometheus scrapes port ${note["prometheus.io/port"]}, metrics are on ${metricsPort}`);
  const dirs = ["--snapshot-dir", "--run-dir"].map((f) => flag(cArgv, f));
  const mounts = (coordinator.container.volumeMounts || []).map((m) => m.mountPath);
  for (const d of dirs) if (!d || !mounts.some((m) => d.startsWith(m + "/"))) fail(where, `${d} is not on a mounted volume`);
  if (!(servers.container.volumeMounts || []).some((m) => dirs[0].startsWith(m.mountPath + "/"))) fail(where, "the servers do not mount the snapshot volume");
}

async function checkTfJob(where, tfjob) {
  if (tfjob.apiVersion !== "kubeflow.org/v1" || tfjob.kind !== "TFJob") return fail(where, "not a kubeflow.org/v1 TFJob");
  const { PodTemplate } = await import("kubernetes-models/v1");
  const binaries = { Chief: "lockstep-coordinator", PS: "lockstep-server", Worker: "lockstep-worker" };
  for (const [type, spec] of Object.entries(tfjob.spec.tfReplicaSpecs)) {
    const at = `${where} ${type}`;
    if (!binaries[type]) fail(at, "is not a replica type Lockstep maps (Chief, PS, Worker)");
    if (!Number.isInteger(spec.replicas) || spec.replicas < 1) fail(at, "replicas is not a positive integer");
    if (!["Always", "OnFailure", "Never", "ExitCode"].includes(spec.restartPolicy)) fail(at, `restartPolicy ${spec.restartPolicy}`);
    if (spec.restartPolicy !== "ExitCode") fail(at, "only ExitCode restarts a preempted (75) replica and not a failed (1) one");
    try {
      new PodTemplate({ metadata: { name: type.toLowerCase() }, template: spec.template }).validate();
    } catch (e) {
      fail(at, e.message.split("\n")[0]);
    }
    const container = spec.template.spec.containers[0];
    if (container.name !== "tensorflow") fail(at, "the operator sets TF_CONFIG for the container named tensorflow");
    const argv = argvOf(container);
    if (argv[0] !== binaries[type]) fail(at, `runs ${argv[0]}, not ${binaries[type]}`);
    parses(at, argv);
  }
}

const dirs = ["base", ...readdirSync(join(k8s, "overlays")).map((d) => join("overlays", d))];
for (const dir of dirs) {
  const rendered = execFileSync("kubectl", ["kustomize", join(k8s, dir)], { encoding: "utf8" });
  const objects = parseAllDocuments(rendered).map((d) => d.toJS()).filter(Boolean);
  for (const o of objects) await validate(`${dir} ${o.kind}/${o.metadata?.name}`, o);
  checkJob(dir, objects);
  console.log(`${dir}: ${objects.length} objects (${objects.map((o) => o.kind).join(", ")})`);
}
const tfjob = parseAllDocuments(readFileSync(join(k8s, "tfjob", "tfjob.yaml"), "utf8")).map((d) => d.toJS());
for (const t of tfjob) await checkTfJob("tfjob", t);
console.log(`tfjob: ${Object.keys(tfjob[0].spec.tfReplicaSpecs).join(", ")}`);
if (failures > 0) {
  console.error(`${failures} problems`);
  process.exit(1);
}
console.log("PASS: every manifest renders and validates");
