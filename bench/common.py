"""What every benchmark script records beside its figures: the machine it ran on."""
from __future__ import annotations

import os
import platform


def machine() -> dict:
    """Platform, CPU count, load average (others' jobs slow timings), torch build and threads."""
    info = {"platform": platform.platform(), "python": platform.python_version(),
            "cpu_count": os.cpu_count(), "loadavg": [round(x, 2) for x in os.getloadavg()]}
    try:
        import torch

        info.update(torch=torch.__version__, torch_threads=torch.get_num_threads(),
                    cuda=torch.cuda.is_available())
        if torch.cuda.is_available():
            info["gpu"] = torch.cuda.get_device_name(0)
    except ImportError:
        pass
    return info


def data_semantics(name: str):
    """The answer rule that conf/data/NAME.yaml sets, so a benchmark scores as infer.py would."""
    from pathlib import Path

    from omegaconf import OmegaConf

    from rra.data.records import AnswerSemantics

    conf = Path(__file__).resolve().parents[1] / "conf" / "data" / f"{name}.yaml"
    return AnswerSemantics.of(OmegaConf.load(conf).get("semantics"))
