#include "vime/loop/eval_run_options.hpp"

namespace vime::loop {

EvalRunOptions EvalRunOptions::from(const Args& args) {
  EvalRunOptions o;
  o.seed = args.get_int("seed");
  if (args.is_set("eval_output")) o.output = args.get_string("eval_output");
  return o;
}

}  // namespace vime::loop
