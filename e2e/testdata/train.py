"""train.py: the README's `faultline run --repeat 20 -- python train.py`.

A training job whose loss turns NaN on every seventh run (the run number is
kept in ./runs): it raises FloatingPointError and exits 1."""
import os


def next_run():
    n = int(open("runs").read()) if os.path.exists("runs") else 0
    with open("runs", "w") as f:
        f.write(str(n + 1))
    return n + 1


def train(run):
    loss = float("nan") if run % 7 == 0 else 0.5
    if loss != loss:
        raise FloatingPointError(f"loss is NaN at run {run}")  # NAN LOSS
    return loss


if __name__ == "__main__":
    print("loss", train(next_run()))
