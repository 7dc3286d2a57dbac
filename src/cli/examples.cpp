#include "cli/examples.h"

#include <map>

namespace mfabric::cli {

// Every example is a command line that works from the root of a checkout (examples/ holds the
// files they name); tests/cli runs the help of every command and checks each has examples.
const std::map<std::string, std::string>& command_examples() {
  static const std::map<std::string, std::string> examples = {
      {"compare",
       "  mfabric compare -o build/compare          # the paper's evaluation, quick subset (~110 "
       "s)\n"
       "  mfabric compare --full -o build/full      # all of it: 100 runs, ~14 min on 2 cores\n"
       "  mfabric compare --models mixtral-8x7b --links 100G,400G --servers 32\n"
       "  mfabric compare examples/mixtral-8x7b.yaml --fabrics fat-tree,mfabric:policy=oracle\n"
       "  mfabric compare --assumptions paper -o build/paper   # as the paper's authors computed "
       "it\n"},
      {"simulate",
       "  mfabric simulate examples/mixtral-8x7b.yaml\n"
       "  mfabric simulate examples/mixtral-8x7b.yaml --fabric mfabric --vs fat-tree\n"
       "  mfabric simulate examples/mixtral-8x7b.yaml -o build/sim --trace\n"
       "  mfabric simulate examples/mixtral-8x22b.yaml -o build/sim --bin 5ms --trace-stage 0\n"},
      {"sweep",
       "  mfabric sweep examples/sweeps/reconfiguration-delay.yaml -o build/sweeps/delay\n"
       "  mpirun -n 2 mfabric sweep examples/sweeps/crossover.yaml -o build/sweeps/crossover\n"},
      {"cost",
       "  mfabric cost                              # every fabric, 128 servers at 400G\n"
       "  mfabric cost --fabric mfabric --link 100G --json\n"
       "  mfabric cost --convention built           # count the built topology instead\n"},
      {"topology",
       "  mfabric topology --fabric mfabric --servers 16\n"
       "  mfabric topology --fabric fat-tree --servers 4 --dot > fat-tree.dot\n"},
      {"fabrics", "  mfabric fabrics\n"},
      {"workload",
       "  mfabric workload --model mixtral-8x22b --gpus 1024 --tp 8 --pp 8 --ep 8\n"
       "  mfabric workload --model mixtral-8x7b --gpus 64 --calibration paper-measurement\n"},
      {"models", "  mfabric models\n"},
      {"kernel",
       "  mfabric kernel expert --gpu h200 --hidden 7168 --ffn 2048 --local-experts 8 "
       "--tokens-per-expert 512\n"
       "  mfabric kernel attention --gpu h100 --heads 8 --kv-heads 2 --head-dim 128 --seq 4096 "
       "--batch 8 --causal --json\n"
       "  mfabric kernel permute --gpu h200 --hidden 4096 --tokens 32768 --top-k 2 --experts 8\n"
       "  mfabric kernel check data/measurements/*.csv --leave-one-out\n"},
      {"trace",
       "  mfabric trace --model mixtral-8x7b --ep 8 --out routing.json\n"
       "  mfabric trace --stats routing.json\n"},
      {"plan",
       "  mfabric plan --demand demand.json --alpha 6 --tl1   # demand.json: "
       "{\"demand_bytes\": [[...]]}\n"
       "  mfabric plan --demand demand.json --algorithm exact --json\n"},
      {"ocs-emulator",
       "  mfabric ocs-emulator --ports 48 --state build/ocs.state   # prints 'listening on "
       "127.0.0.1:PORT'\n"
       "  mfabric ocs-emulator --ports 48 --switching 25ms --state build/ocs.state --listen "
       "127.0.0.1:3082 --max-time 60s\n"},
      {"controller",
       "  mfabric controller --ocs 127.0.0.1:3082 --regions regions.yaml --token-file token   "
       "# prints 'listening on 127.0.0.1:PORT'\n"
       "  mfabric controller --ocs 10.0.0.5:3082 --ocs-user ctl --ocs-password-file ocs.password "
       "--regions regions.yaml --listen 0.0.0.0:50051 --tls-cert server.pem --tls-key server.key "
       "--tls-ca clients-ca.pem\n"},
      {"moe-bench",
       "  mpirun -n 16 mfabric moe-bench --servers 4 --layers 8 --tokens 4096 --hidden 1KiB\n"
       "  mpirun -n 8 mfabric moe-bench --servers 2 --policy reuse-previous --json\n"
       "  mpirun -n 16 mfabric moe-bench --servers 4 --controller 127.0.0.1:PORT --token-file "
       "token --policy block\n"},
      {"predict",
       "  mfabric predict --model mixtral-8x7b\n"
       "  mfabric predict --model mixtral-8x7b --trace routing.json --json\n"},
  };
  return examples;
}

}  // namespace mfabric::cli
