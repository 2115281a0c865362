# Homebrew formula for metalcap, for a tap (brew tap OWNER/metalcap).
# Written and checked on Linux (ruby -c, and tests/pkg/check-formula.sh
# against the Makefile), not run by brew: cross-checked, not installed.
# Replace url's OWNER and sha256 from make dist's metalcap-VERSION.tar.gz.sha256.
require "json"

class Metalcap < Formula
  desc "Raise the Metal GPU family a macOS VM reports, so llama.cpp runs fast"
  homepage "https://github.com/OWNER/metalcap"
  url "https://github.com/OWNER/metalcap/releases/download/v0.1.0/metalcap-0.1.0.tar.gz"
  sha256 "@SHA256@"
  license "MIT"

  depends_on "pkg-config" => :build
  depends_on "jansson"
  depends_on "libplist"
  depends_on "libuv"
  depends_on "msgpack"
  depends_on :macos

  def install
    # The shim needs its arm64e slice (arm64e children of a workload);
    # superenv would strip the Makefile's -arch flags.
    ENV.permit_arch_flags if ENV.respond_to?(:permit_arch_flags)
    # DEPS=none: the dependencies are declared above, brew installs them.
    # The agent in share/metalcap names opt/, which outlives this version.
    system "make", "install", "PREFIX=#{prefix}",
           "AGENT_LIBEXECDIR=#{opt_libexec}", "DEPS=none"
  end

  def post_install
    # launchd does not start a job whose log file cannot be opened.
    (var/"log/metalcap").mkpath
  end

  service do
    run [opt_libexec/"metalcap/metalcapd", "--foreground"]
    # service.rb allows every session type (Aqua, Background, ...), so
    # launchd may start one metalcapd per session; all but the first find
    # the user's lock and exit 0, which is not restarted; a failure is.
    keep_alive successful_exit: false
    # Interactive, as the package's agent (agent-template/metalcapd.plist):
    # its probes, checks and benches inherit it.
    process_type :interactive
    log_path var/"log/metalcap/metalcapd.log"
    error_log_path var/"log/metalcap/metalcapd.log"
  end

  def caveats
    <<~EOS
      Run the daemon for your user with:
        brew services start metalcap
      Never together with the installer package's agent
      (/Library/LaunchAgents/org.metalcap.metalcapd.plist): both would run
      a metalcapd for the same user, and the second exits on the socket
      check and is restarted for ever.  metalcapctl doctor warns when both
      are present; remove the package (sudo /usr/local/libexec/metalcap/uninstall)
      or stop the service (brew services stop metalcap).
    EOS
  end

  test do
    assert_match version.to_s, shell_output("#{bin}/metalcapctl --version")
    # The daemon itself, in a home of its own (no job files: launchd is
    # not asked to run anything), answering metalcapctl over its socket.
    home = testpath/"mc"
    pid = spawn(opt_libexec/"metalcap/metalcapd", "--home", home.to_s, "--foreground")
    begin
      50.times do
        break if (home/"metalcapd.sock").socket?

        sleep 0.1
      end
      assert_match(/^NAME +STATE/, shell_output("#{bin}/metalcapctl --home #{home} status"))
    ensure
      Process.kill("TERM", pid)
      Process.wait(pid)
    end
    # The probe's report names the device; with none (a build machine
    # without a GPU) it says so and exits 3, else 0 (pass) or 1 (a check
    # failed).
    out = shell_output("#{libexec}/metalcap/metalcap-probe --json; echo \"exit=$?\"")
    report = JSON.parse(out[/\A\{.*^\}/m])
    if report["device"].nil?
      assert_match(/^exit=3$/, out)
    else
      assert_match(/^exit=[01]$/, out)
    end
  end
end
