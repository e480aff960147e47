# Slurm for job/slurm_test.go: the test configures and starts its own
# one-node cluster (slurmctld, slurmd, munged with a private key and
# socket, all on 127.0.0.1) and stops it; nothing here is started.
# slurm-client gives srun, sbatch, scontrol, squeue and scancel; gcc builds
# the test's rank programs.
apt_install slurmctld slurmd slurm-client munge gcc
