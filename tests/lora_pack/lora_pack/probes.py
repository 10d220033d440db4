"""The worker's probes of the LoRA pack: the student's two classes, each building a module the
judge then loads and runs (``LinearWithLoRA``'s linear layer rebuilt from its sizes)."""

from grader.pack.worker import module_probes
from lora_pack.models import linear

EXE_1 = module_probes("LoRALayer") | module_probes("LinearWithLoRA", build={"linear": linear})
