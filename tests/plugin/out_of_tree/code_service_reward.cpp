// A reward plugin built out of tree against the installed headers only ([scaffold]), using what a
// tool plugin needs from libvime: it POSTs the response to the code service at --rm-url
// (<vime/http_fetch.hpp>), runs the Python the service answers in the code sandbox
// (<vime/code_sandbox.hpp>) and returns what that prints as the reward.
#include <vime/code_sandbox.hpp>
#include <vime/hooks.hpp>
#include <vime/http_fetch.hpp>

namespace {

const vime::CodeSandbox& sandbox() {
  static const vime::CodeSandbox sandbox = [] {
    vime::CodeSandboxOptions options;
    options.limits.wall_timeout_s = 30;
    options.concurrency = 2;
    return vime::CodeSandbox(options);
  }();
  return sandbox;
}

vime::Json code_service_reward(const vime::Args& args, const vime::Sample& sample) {
  vime::Json question = vime::Json::object();
  question["response"] = sample.response;
  const vime::HttpResponse reply =
      vime::http_fetch(vime::HttpRequest::post_json(args.get_string("rm_url"), question, 30));
  if (!reply.ok()) throw vime::Error("the code service: " + reply.describe());
  const vime::Json answer = vime::Json::parse(reply.body, "the code service's reply");
  const vime::CodeSandboxRun run = sandbox().run_python(answer.at("code").as_string());
  if (run.exit_code != 0) throw vime::Error("the sandboxed code failed: " + run.stderr_text);
  return vime::Json::parse(run.stdout_text, "the sandboxed code's output");
}

}  // namespace

VIME_REWARD_PLUGIN(code_service_reward)
