# cordon_warnings(target): our own code builds with -Wall -Wextra -Werror.
function(cordon_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
endfunction()
