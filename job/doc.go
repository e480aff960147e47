// Package job triages a crashed or hung multi-node job the way LLNL's STAT
// merges stack traces: every rank's process is summarized where its core or
// live process is (a rank summary: the crash model's threads as a compact
// call-path table plus a job object naming the rank, host and Slurm ids),
// the summaries are gathered through the cluster's scheduler (srun
// --overlap), and merged locally into a call-prefix tree with rank sets,
// equivalence classes of ranks (odd ones out first), crash signature groups
// and rank-to-host placement.
//
// The package reads untrusted summary files: every size is capped and a
// malformed file becomes a per-file problem while the rest are merged.
package job
