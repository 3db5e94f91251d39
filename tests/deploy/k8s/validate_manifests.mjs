// deploy/k8s offline: every kustomization (the base and each overlay) is
// rendered with `kubectl kustomize` and every object validated against the
// Kubernetes API's schemas (kubernetes-models); the TFJob example's
// replicas against the TFJob v1 fields and their pod templates against the
// PodTemplate schema. Then what a schema cannot see: the roles find each
// other (the coordinator's DNS name and port, the headless Service), the
// job's sizes match the Jobs', exit 75 is "preempted, resumable" for every
// Job, volumes and Prometheus annotations point at what exists, and every
// command line parses with the real binaries (BIN_DIR/lockstep-* ... --help).
// Then what a real cluster would refuse or get wrong: every pod template
// (base, overlays, TFJob) against the Pod Security Standards' restricted
// profile; the keys readable and the snapshot claim writable by the image's
// user as the kubelet mounts them (fsGroup); the preempted exit code
// retried by each engine (an Indexed Job's Ignore rule, TFJob's ExitCode:
// >= 128); probes on the health endpoint; the metrics port behind a token;
// images pinned, the GPU workers' built with CUDA; finished jobs cleaned up;
// the RWX claim's class named; no overlay patching a list by position; every
// kustomization renamed by a namePrefix still one consistent job, beside
// the unprefixed one in the same namespace; and the Secret the docs create
// holding only the keys the pods mount (never admin.key).
//   node validate_manifests.mjs SOURCE_DIR BIN_DIR
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseAllDocuments, parse as parseYaml } from "yaml";

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

// The container's environment as the kubelet makes it: the downward API's
// labels, then $(VAR) references to earlier variables expanded.
function envOf(container, pod) {
  const env = {};
  const expand = (v) => String(v).replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, name) => env[name] ?? m);
  for (const e of container.env || []) {
    if ("value" in e) env[e.name] = expand(e.value);
    const field = e.valueFrom?.fieldRef?.fieldPath || "";
    const label = field.match(/^metadata\.labels\['(.+)'\]$/);
    if (label) env[e.name] = pod.metadata?.labels?.[label[1]] ?? "";
  }
  return env;
}

// "exec lockstep-x --a b $VAR" (sh -c) or command + args: the argv, with
// $(VARS) expanded by the kubelet and $VARS by the shell.
function argvOf(container, pod = {}) {
  const env = envOf(container, pod);
  const expand = (v) => String(v).replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, name) => env[name] ?? m);
  let argv = [...(container.command || []), ...(container.args || [])].map(expand);
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

// The exit status a role uses for "preempted, resumable".
function preemptedCode(container, pod) {
  const value = envOf(container, pod).LOCKSTEP_PREEMPTED_EXIT_CODE;
  return value === undefined ? 75 : Number(value);
}

// The Pod Security Standards' restricted profile (which includes the
// baseline), as the PodSecurity admission controller checks a pod spec:
// https://kubernetes.io/docs/concepts/security/pod-security-standards/
const kBaselineCapabilities = new Set(["AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"]);
const kSafeSysctls = new Set(["kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"]);
const kRestrictedVolumes = new Set(["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"]);
const kSeLinuxTypes = new Set([undefined, "", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"]);
function restrictedViolations(spec, annotations = {}) {
  const bad = [];
  const containers = [...(spec.initContainers || []), ...(spec.containers || []), ...(spec.ephemeralContainers || [])];
  const podSc = spec.securityContext || {};
  for (const host of ["hostNetwork", "hostPID", "hostIPC"]) if (spec[host]) bad.push(`${host} is true`);
  if (podSc.windowsOptions?.hostProcess) bad.push("a HostProcess pod");
  for (const v of spec.volumes || []) {
    const type = Object.keys(v).find((k) => k !== "name");
    if (!kRestrictedVolumes.has(type)) bad.push(`volume ${v.name} is ${type}`);
  }
  for (const s of podSc.sysctls || []) if (!kSafeSysctls.has(s.name)) bad.push(`sysctl ${s.name}`);
  const seLinux = (o) => {
    if (!o) return;
    if (!kSeLinuxTypes.has(o.type)) bad.push(`SELinux type ${o.type}`);
    if (o.user || o.role) bad.push("SELinux user or role set");
  };
  seLinux(podSc.seLinuxOptions);
  const seccomp = (o) => o?.type;
  if (seccomp(podSc.seccompProfile) === "Unconfined") bad.push("the pod's seccomp profile is Unconfined");
  if (podSc.runAsUser === 0) bad.push("the pod runs as uid 0");
  for (const [k, v] of Object.entries(annotations)) {
    if (k.startsWith("container.apparmor.security.beta.kubernetes.io/") && !(v === "runtime/default" || v.startsWith("localhost/"))) bad.push(`AppArmor ${v}`);
  }
  for (const c of containers) {
    const sc = c.securityContext || {};
    const at = `container ${c.name}`;
    if (sc.privileged) bad.push(`${at} is privileged`);
    if (sc.windowsOptions?.hostProcess) bad.push(`${at} is a HostProcess container`);
    for (const p of c.ports || []) if (p.hostPort) bad.push(`${at} takes host port ${p.hostPort}`);
    if (sc.procMount && sc.procMount !== "Default") bad.push(`${at} has procMount ${sc.procMount}`);
    seLinux(sc.seLinuxOptions);
    const added = sc.capabilities?.add || [];
    for (const cap of added) if (!kBaselineCapabilities.has(cap)) bad.push(`${at} adds ${cap}`);
    // restricted
    if (sc.allowPrivilegeEscalation !== false) bad.push(`${at} does not set allowPrivilegeEscalation: false`);
    const nonRoot = sc.runAsNonRoot ?? podSc.runAsNonRoot;
    if (nonRoot !== true) bad.push(`${at} does not set runAsNonRoot: true (pod or container)`);
    if (sc.runAsUser === 0) bad.push(`${at} runs as uid 0`);
    const profile = seccomp(sc.seccompProfile) ?? seccomp(podSc.seccompProfile);
    if (profile !== "RuntimeDefault" && profile !== "Localhost") bad.push(`${at} has no seccomp profile RuntimeDefault or Localhost`);
    if (!(sc.capabilities?.drop || []).includes("ALL")) bad.push(`${at} does not drop ALL capabilities`);
    for (const cap of added) if (cap !== "NET_BIND_SERVICE") bad.push(`${at} adds ${cap} (restricted: NET_BIND_SERVICE only)`);
  }
  return bad;
}

// The image's user, as its Containerfile sets it (USER uid:gid).
function imageUser(file) {
  const m = readFileSync(join(src, "deploy", "container", file), "utf8").match(/^USER\s+(\d+)(?::(\d+))?\s*$/m);
  if (!m) throw new Error(`${file} sets no numeric USER`);
  return { uid: Number(m[1]), gid: Number(m[2] ?? m[1]) };
}
const kImages = { lockstep: "Containerfile", "lockstep-cuda": "Containerfile.cuda" };
const imageName = (image) => image.split("/").pop().split(/[:@]/)[0];

// Who the container's process is: the securityContext's uid and gid over the
// image's USER, plus fsGroup and supplementalGroups.
function processOf(pod, container) {
  let file = kImages[imageName(container.image)] || "Containerfile";
  if (!existsSync(join(src, "deploy", "container", file))) file = "Containerfile";
  const user = imageUser(file);
  const podSc = pod.spec.securityContext || {};
  const sc = container.securityContext || {};
  const uid = sc.runAsUser ?? podSc.runAsUser ?? user.uid;
  const gid = sc.runAsGroup ?? podSc.runAsGroup ?? user.gid;
  const groups = new Set([gid, ...(podSc.supplementalGroups || [])]);
  if (podSc.fsGroup !== undefined) groups.add(podSc.fsGroup);
  return { uid, groups };
}

// A secret volume's file as the kubelet writes it: owned by root, mode
// item.mode or defaultMode (0644); with fsGroup its group is fsGroup and
// it gains the group's read bit (0440, a read-only volume).
function secretFile(pod, volume, key) {
  const item = (volume.secret.items || []).find((i) => i.key === key || i.path === key);
  let mode = item?.mode ?? volume.secret.defaultMode ?? 0o644;
  let gid = 0;
  const fsGroup = pod.spec.securityContext?.fsGroup;
  if (fsGroup !== undefined) {
    gid = fsGroup;
    mode |= 0o440;
  }
  return { uid: 0, gid, mode };
}
function may(process, file, bits) {
  // bits: 4 read, 2 write (of the owner's triple)
  if (process.uid === 0) return true;
  if (process.uid === file.uid) return ((file.mode >> 6) & bits) === bits;
  if (process.groups.has(file.gid)) return ((file.mode >> 3) & bits) === bits;
  return (file.mode & bits) === bits;
}

// What the kubelet and the image make of one pod of a role: it passes the
// restricted profile, reads its key, writes its snapshots, answers probes
// on its health endpoint, and runs a pinned image with what it needs.
function checkPod(at, pod, argv, objects) {
  for (const v of restrictedViolations(pod.spec, pod.metadata?.annotations)) fail(at, `restricted Pod Security: ${v}`);
  const container = pod.spec.containers[0];
  const process = processOf(pod, container);
  const env = envOf(container, pod);
  // The key: readable by the role's user, and not refused by the role (a
  // key others may read, or the group write, stops it).
  const keysMount = (container.volumeMounts || []).find((m) => m.mountPath === env.LOCKSTEP_KEYS);
  const keysVolume = (pod.spec.volumes || []).find((v) => v.name === keysMount?.name);
  for (const item of keysVolume?.secret?.items || []) {
    const file = secretFile(pod, keysVolume, item.key);
    if (!may(process, file, 4)) fail(at, `uid ${process.uid} cannot read ${env.LOCKSTEP_KEYS}/${item.path} (root:${file.gid} ${file.mode.toString(8)}): Permission denied`);
    if (file.mode & 0o026) fail(at, `${item.path} would be mode ${file.mode.toString(8)}, which the role refuses (others may read it)`);
  }
  // A claim's root is root's 0755 on most provisioners; fsGroup makes it the
  // group's (g+rwx, setgid).
  for (const m of container.volumeMounts || []) {
    const volume = (pod.spec.volumes || []).find((v) => v.name === m.name);
    if (!volume?.persistentVolumeClaim || m.readOnly) continue;
    const fsGroup = pod.spec.securityContext?.fsGroup;
    const root = fsGroup === undefined ? { uid: 0, gid: 0, mode: 0o755 } : { uid: 0, gid: fsGroup, mode: 0o2775 };
    if (!may(process, root, 2)) fail(at, `uid ${process.uid} cannot write ${m.mountPath} (the claim's root, root:${root.gid} ${root.mode.toString(8)})`);
  }
  if (container.securityContext?.readOnlyRootFilesystem !== true) fail(at, "its root file system is writable");
  // Probes: liveness on /healthz, readiness on /readyz, at the health
  // endpoint the role serves (--health-listen, or LOCKSTEP_HEALTH_LISTEN).
  const listen = flag(argv, "--health-listen") ?? env.LOCKSTEP_HEALTH_LISTEN;
  const healthPort = Number((listen || "").split(":").pop());
  const portOf = (p) => (typeof p === "number" ? p : (container.ports || []).find((c) => c.name === p)?.containerPort);
  for (const [probe, path] of [["livenessProbe", "/healthz"], ["readinessProbe", "/readyz"]]) {
    const get = container[probe]?.httpGet;
    if (!get) fail(at, `has no ${probe} (httpGet ${path})`);
    else if (get.path !== path || !listen || portOf(get.port) !== healthPort) fail(at, `its ${probe} asks ${get.path} on port ${get.port}, the health endpoint is ${path} on ${listen || "nothing"}`);
  }
  // The image: pinned, pulled only when missing, and built with CUDA where
  // a worker computes on a GPU.
  const image = container.image || "";
  const tag = image.includes("@") ? "digest" : image.split("/").pop().split(":")[1];
  if (!tag || tag === "latest") fail(at, `image ${image} is not pinned to a version`);
  if (container.imagePullPolicy !== "IfNotPresent") fail(at, `imagePullPolicy ${container.imagePullPolicy}, not IfNotPresent`);
  const gpu = flag(argv, "--device")?.startsWith("cuda") || container.resources?.limits?.["nvidia.com/gpu"];
  if (gpu && !existsSync(join(src, "deploy", "container", kImages["lockstep-cuda"]))) fail(at, "computes on a GPU, and no Containerfile builds a CUDA image");
  if (gpu && imageName(image) !== "lockstep-cuda") fail(at, `computes on a GPU in ${image}, which is built without CUDA (deploy/container/Containerfile.cuda builds lockstep-cuda)`);
  if (!gpu && imageName(image) !== "lockstep") fail(at, `runs ${image}, not the lockstep image`);
  if (pod.spec.automountServiceAccountToken !== false) fail(at, "mounts a service account token it never uses");
}

function podsOf(objects) {
  return objects.filter((o) => o.kind === "Job").map((job) => ({ job, pod: job.spec.template, container: job.spec.template.spec.containers[0] }));
}

function checkJob(where, objects) {
  const service = objects.find((o) => o.kind === "Service");
  const claims = new Set(objects.filter((o) => o.kind === "PersistentVolumeClaim").map((o) => o.metadata.name));
  const pods = podsOf(objects);
  const role = (name) => pods.find((p) => argvOf(p.container, p.pod)[0] === `lockstep-${name}`);
  const coordinator = role("coordinator");
  const servers = role("server");
  const workers = role("worker");
  if (!coordinator || !servers || !workers) return fail(where, "needs a coordinator, a server and a worker Job");
  if (!service || service.spec.clusterIP !== "None") fail(where, "the Service is not headless");
  const cArgv = argvOf(coordinator.container, coordinator.pod);
  const port = (flag(cArgv, "--listen") || "").split(":").pop();
  const dns = `tcp://${coordinator.job.metadata.name}-0.${service.metadata.name}:${port}`;
  if (!service.spec.ports.some((p) => String(p.port) === port)) fail(where, `the Service has no port ${port}`);
  for (const { job, pod, container } of pods) {
    const at = `${where} ${job.metadata.name}`;
    const argv = argvOf(container, pod);
    parses(at, argv);
    checkPod(at, pod, argv, objects);
    if (pod.spec.subdomain !== service.metadata.name) fail(at, "its pods are not in the Service's subdomain");
    for (const [k, v] of Object.entries(service.spec.selector)) {
      if (pod.metadata.labels?.[k] !== v) fail(at, `its pods lack the Service's selector ${k}=${v}`);
    }
    if (job.spec.completionMode !== "Indexed") fail(at, "is not an Indexed Job (ranks come from the index)");
    if (pod.spec.restartPolicy !== "Never") fail(at, "a pod failure policy needs restartPolicy Never");
    // A pod preempted, evicted or drained - the whole job's or a lone
    // worker's - exits with the preempted code: its index is replaced, never
    // counted as failed nor as succeeded.
    const code = preemptedCode(container, pod);
    const resumable = (job.spec.podFailurePolicy?.rules || []).some((r) => r.action === "Ignore" && r.onExitCodes?.operator === "In" && r.onExitCodes.values.includes(code));
    if (!resumable) fail(at, `exit ${code} (preempted, resumable) would count as a failure`);
    if (!Number.isInteger(job.spec.ttlSecondsAfterFinished)) fail(at, "has no ttlSecondsAfterFinished: finished Jobs and their pods pile up");
    if ((pod.spec.terminationGracePeriodSeconds ?? 30) < 26) fail(at, "the grace period is shorter than a role's 25 s wait for the coordinator");
    if (job !== coordinator.job) {
      const env = envOf(container, pod);
      if (env.LOCKSTEP_COORDINATOR !== dns) fail(at, `LOCKSTEP_COORDINATOR is ${env.LOCKSTEP_COORDINATOR}, the coordinator is ${dns}`);
      const podIp = (container.env || []).find((e) => e.name === "POD_IP");
      if (podIp?.valueFrom?.fieldRef?.fieldPath !== "status.podIP") fail(at, "POD_IP is not the pod's IP");
    }
    // Security is on: each pod reads its own role's key, and only that,
    // from the job's Secret (the Service's name + "-keys").
    const role = { "lockstep-coordinator": "coordinator", "lockstep-server": "server", "lockstep-worker": "worker" }[argv[0]];
    const secret = `${service.metadata.name}-keys`;
    const keysEnv = (container.env || []).find((e) => e.name === "LOCKSTEP_KEYS");
    const mounted = (container.volumeMounts || []).find((m) => m.mountPath === keysEnv?.value);
    const keyVolume = (pod.spec.volumes || []).find((v) => v.name === mounted?.name);
    if (!keysEnv || !keyVolume || keyVolume.secret?.secretName !== secret) fail(at, `its pods do not mount the Secret ${secret} at $LOCKSTEP_KEYS`);
    else if ((keyVolume.secret.items || []).map((i) => i.key).join() !== `${role}.key`) fail(at, `its pods get ${(keyVolume.secret.items || []).map((i) => i.key).join() || "every key"}, not just ${role}.key`);
    for (const v of pod.spec.volumes || []) {
      if (v.secret && v.secret.secretName !== secret) fail(at, `mounts the Secret ${v.secret.secretName}, not the job's ${secret}`);
    }
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
  for (const claim of objects.filter((o) => o.kind === "PersistentVolumeClaim")) {
    if (claim.spec.accessModes?.includes("ReadWriteMany") && !claim.spec.storageClassName) fail(where, `the claim ${claim.metadata.name} takes the default StorageClass, seldom ReadWriteMany`);
  }
  const note = coordinator.pod.metadata.annotations || {};
  const metricsPort = (flag(cArgv, "--metrics-listen") || "").split(":").pop();
  if (note["prometheus.io/scrape"] !== "true" || note["prometheus.io/port"] !== metricsPort) fail(where, `Prometheus scrapes port ${note["prometheus.io/port"]}, metrics are on ${metricsPort}`);
  // Beyond the pod's loopback the metrics are anyone's without a token.
  const metricsHost = (flag(cArgv, "--metrics-listen") || "127.0.0.1:").split(":")[0];
  const tokenFile = flag(cArgv, "--metrics-token-file");
  if (!["127.0.0.1", "localhost"].includes(metricsHost)) {
    const mount = (coordinator.container.volumeMounts || []).find((m) => tokenFile?.startsWith(m.mountPath + "/"));
    const volume = (coordinator.pod.spec.volumes || []).find((v) => v.name === mount?.name);
    if (!tokenFile) fail(where, `the metrics port listens on ${metricsHost} with no --metrics-token-file`);
    else if (!volume?.secret) fail(where, `the metrics token ${tokenFile} is not on a Secret volume`);
  }
  const dirs = ["--snapshot-dir", "--run-dir"].map((f) => flag(cArgv, f));
  const mounts = (coordinator.container.volumeMounts || []).map((m) => m.mountPath);
  for (const d of dirs) if (!d || !mounts.some((m) => d.startsWith(m + "/"))) fail(where, `${d} is not on a mounted volume`);
  if (!(servers.container.volumeMounts || []).some((m) => dirs[0].startsWith(m.mountPath + "/"))) fail(where, "the servers do not mount the snapshot volume");
}

async function checkTfJob(where, tfjob, objects) {
  if (tfjob.apiVersion !== "kubeflow.org/v1" || tfjob.kind !== "TFJob") return fail(where, "not a kubeflow.org/v1 TFJob");
  if (!Number.isInteger(tfjob.spec.runPolicy?.ttlSecondsAfterFinished)) fail(where, "has no runPolicy.ttlSecondsAfterFinished: finished TFJobs and their pods pile up");
  const claims = new Set(objects.filter((o) => o.kind === "PersistentVolumeClaim").map((o) => o.metadata.name));
  for (const claim of objects.filter((o) => o.kind === "PersistentVolumeClaim")) {
    if (claim.spec.accessModes?.includes("ReadWriteMany") && !claim.spec.storageClassName) fail(where, `the claim ${claim.metadata.name} takes the default StorageClass, seldom ReadWriteMany`);
  }
  const { PodTemplate } = await import("kubernetes-models/v1");
  const binaries = { Chief: "lockstep-coordinator", PS: "lockstep-server", Worker: "lockstep-worker" };
  for (const [type, spec] of Object.entries(tfjob.spec.tfReplicaSpecs)) {
    const at = `${where} ${type}`;
    if (!binaries[type]) fail(at, "is not a replica type Lockstep maps (Chief, PS, Worker)");
    if (!Number.isInteger(spec.replicas) || spec.replicas < 1) fail(at, "replicas is not a positive integer");
    if (!["Always", "OnFailure", "Never", "ExitCode"].includes(spec.restartPolicy)) fail(at, `restartPolicy ${spec.restartPolicy}`);
    if (spec.restartPolicy !== "ExitCode") fail(at, "only ExitCode restarts a preempted replica and not a failed (1) one");
    try {
      new PodTemplate({ metadata: { name: type.toLowerCase() }, template: spec.template }).validate();
    } catch (e) {
      fail(at, e.message.split("\n")[0]);
    }
    const container = spec.template.spec.containers[0];
    if (container.name !== "tensorflow") fail(at, "the operator sets TF_CONFIG for the container named tensorflow");
    const argv = argvOf(container, spec.template);
    if (argv[0] !== binaries[type]) fail(at, `runs ${argv[0]}, not ${binaries[type]}`);
    parses(at, argv);
    checkPod(at, spec.template, argv, objects);
    // The training operator's ExitCode policy restarts a replica only for
    // exit codes 128-255 (retryable); 1-127 fail the replica for good.
    const code = preemptedCode(container, spec.template);
    if (!(code >= 128 && code <= 255)) fail(at, `exits ${code} when preempted, which restartPolicy ExitCode does not retry (>= 128 only)`);
    for (const v of spec.template.spec.volumes || []) {
      if (v.persistentVolumeClaim && !claims.has(v.persistentVolumeClaim.claimName)) fail(at, `claims ${v.persistentVolumeClaim.claimName}, which is not rendered`);
      if (v.secret && v.secret.secretName !== `${tfjob.metadata.name}-keys`) fail(at, `mounts the Secret ${v.secret.secretName}, not the job's ${tfjob.metadata.name}-keys`);
    }
  }
}

// A JSON patch op that names a list element by its place (/env/2) edits
// whatever sits there once the list changes.
function checkPatches(dir) {
  const file = join(k8s, dir, "kustomization.yaml");
  const kustomization = parseYaml(readFileSync(file, "utf8"));
  for (const p of kustomization.patches || []) {
    const body = p.patch ?? (p.path ? readFileSync(join(k8s, dir, p.path), "utf8") : "");
    const ops = parseYaml(body);
    for (const op of Array.isArray(ops) ? ops : []) {
      if (/\/(env|containers|volumes|volumeMounts|ports|args)\/\d+/.test(op.path || "")) fail(dir, `patches ${op.path}: a list element by its place, not by its name`);
    }
  }
}

// The objects a kustomization renders.
function render(dir) {
  if (!["kustomization.yaml", "kustomization.yml", "Kustomization"].some((f) => existsSync(join(dir, f))) && !dir.includes("lockstep-kustomize-")) {
    fail(relative(k8s, dir), "is not a kustomization (kubectl apply -k)");
    return readdirSync(dir).filter((f) => f.endsWith(".yaml")).flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), "utf8")).map((d) => d.toJS()).filter(Boolean));
  }
  const rendered = execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8" });
  return parseAllDocuments(rendered).map((d) => d.toJS()).filter(Boolean);
}

// A second job beside the first: the kustomization under an overlay of
// namePrefix alone must stay one consistent job (checked as the first),
// share no object's name with the first and select none of its pods.
function prefixed(dir) {
  if (!existsSync(join(k8s, dir, "kustomization.yaml"))) return [];
  const tmp = mkdtempSync(join(tmpdir(), "lockstep-kustomize-"));
  try {
    writeFileSync(join(tmp, "kustomization.yaml"), `resources:\n  - ${relative(tmp, join(k8s, dir))}\nnamePrefix: second-\n`);
    return render(tmp);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
function checkBeside(where, first, second) {
  const names = new Set(first.map((o) => `${o.kind}/${o.metadata.name}`));
  for (const o of second) if (names.has(`${o.kind}/${o.metadata.name}`)) fail(where, `both jobs make ${o.kind}/${o.metadata.name}`);
  const service = second.find((o) => o.kind === "Service");
  for (const { job, pod } of podsOf(first)) {
    const selected = service && Object.entries(service.spec.selector).every(([k, v]) => pod.metadata.labels?.[k] === v);
    if (selected) fail(where, `the second job's Service selects the first's ${job.metadata.name} pods`);
  }
}

// The Secret the docs create: exactly the files the pods mount (the
// role keys and the metrics token), never a folder (admin.key would go
// into the cluster with the rest).
function checkDocsSecret(objects) {
  const docs = readFileSync(join(src, "docs", "deployment.md"), "utf8");
  const blocks = [...docs.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]).join("\n");
  const commands = blocks.replace(/\\\n\s*/g, " ").match(/kubectl create secret generic [^\n]*/g) || [];
  if (commands.length === 0) return fail("docs/deployment.md", "never creates the job's Secret");
  const wanted = new Set();
  for (const { pod } of podsOf(objects)) for (const v of pod.spec.volumes || []) for (const i of v.secret?.items || []) wanted.add(i.key);
  for (const command of commands) {
    const files = [...command.matchAll(/--from-file=(?:([^=\s]+)=)?(\S+)/g)].map(([, key, path]) => ({ key: key ?? path.split("/").pop(), path }));
    const keys = new Set(files.map((f) => f.key));
    for (const f of files) {
      if (f.path.endsWith("/") || !/\.key$|token$/.test(f.path)) fail("docs/deployment.md", `${command.trim()}: --from-file=${f.path} puts a whole folder (admin.key too) into the cluster`);
      if (f.key === "admin.key") fail("docs/deployment.md", `${command.trim()}: admin.key does not belong in the cluster`);
    }
    for (const key of wanted) if (!keys.has(key)) fail("docs/deployment.md", `${command.trim()}: no ${key}, which the pods mount`);
  }
}

const dirs = ["base", ...readdirSync(join(k8s, "overlays")).map((d) => join("overlays", d))];
for (const dir of dirs) {
  const objects = render(join(k8s, dir));
  for (const o of objects) await validate(`${dir} ${o.kind}/${o.metadata?.name}`, o);
  checkJob(dir, objects);
  checkPatches(dir);
  const second = prefixed(dir);
  checkJob(`${dir} (namePrefix second-)`, second);
  checkBeside(`${dir} (namePrefix second-)`, objects, second);
  if (dir === "base") checkDocsSecret(objects);
  console.log(`${dir}: ${objects.length} objects (${objects.map((o) => o.kind).join(", ")}); beside it, ${second.find((o) => o.kind === "Service")?.metadata.name}`);
}
const tfjobs = [["tfjob", render(join(k8s, "tfjob"))], ["tfjob (namePrefix second-)", prefixed("tfjob")]];
for (const [where, objects] of tfjobs) {
  for (const o of objects.filter((o) => o.kind !== "TFJob")) await validate(`${where} ${o.kind}/${o.metadata?.name}`, o);
  const tfjob = objects.filter((o) => o.kind === "TFJob");
  if (objects.length === 0) continue;
  if (tfjob.length !== 1) fail(where, `${tfjob.length} TFJobs rendered`);
  for (const t of tfjob) await checkTfJob(where, t, objects);
  console.log(`${where}: ${tfjob.map((t) => `${t.metadata.name}: ${Object.keys(t.spec.tfReplicaSpecs).join(", ")}`).join()}`);
}
if (failures > 0) {
  console.error(`${failures} problems`);
  process.exit(1);
}
console.log("PASS: every manifest renders and validates");
