//! EFI runtime services: firmware code the kernel calls (variables, the RTC on some
//! machines) runs with preemption off for as long as the firmware takes; PREEMPT_RT kernels
//! disable them by default (`CONFIG_EFI_DISABLE_RUNTIME`, drivers/firmware/efi/Kconfig;
//! `efi=noruntime`, Documentation/admin-guide/kernel-parameters.txt).

use super::super::{Check, Context, Finding, Severity};
use crate::facts::Facts;

/// `platform.efi_runtime`.
pub struct EfiRuntime;

impl Check for EfiRuntime {
    fn id(&self) -> &'static str {
        "platform.efi_runtime"
    }
    fn about(&self) -> &'static str {
        "EFI runtime services: firmware code the kernel calls with preemption off."
    }
    fn check(&self, facts: &Facts, _ctx: &Context) -> Vec<Finding> {
        let base = Finding::new(self.id(), "EFI runtime services", Severity::Ok)
            .expected("not booted with EFI, or its runtime services disabled")
            .cite("Documentation/admin-guide/kernel-parameters.txt");
        let k = &facts.kernel;
        let efi = match base.need(&k.efi) {
            Ok(e) => *e,
            Err(f) => return vec![f.effect("unknown")],
        };
        let cmdline = k.cmdline.value().map(String::as_str).unwrap_or("");
        let off_by_cmdline = cmdline
            .split_whitespace()
            .filter_map(|w| w.strip_prefix("efi="))
            .any(|v| v.split(',').any(|o| o == "noruntime"));
        let off = off_by_cmdline
            || (k.config_y("EFI_DISABLE_RUNTIME") && !cmdline.contains("efi=runtime"));
        let src = "/sys/firmware/efi, /proc/cmdline (efi=), CONFIG_EFI_DISABLE_RUNTIME";
        vec![match (efi, off) {
            (false, _) => base
                .found("not booted with EFI", src)
                .effect("no firmware calls at run time"),
            (true, true) => base
                .found("booted with EFI, runtime services disabled", src)
                .effect("no firmware calls at run time"),
            (true, false) => base
                .severity(Severity::Info)
                .found("booted with EFI, runtime services enabled", src)
                .effect("an EFI variable or RTC access runs firmware with preemption off, for µs to ms")
                .fix("boot with efi=noruntime if nothing on the machine needs EFI variables at run time (efibootmgr does)"),
        }]
    }
}
