# plinth_warnings(target): the project's warning set; errors when PLINTH_WERROR is ON (CI).
function(plinth_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra -Wpedantic -Wshadow=local -Wno-unused-parameter>
    $<$<AND:$<BOOL:${PLINTH_WERROR}>,$<COMPILE_LANGUAGE:CXX,C>>:-Werror>)
endfunction()
