; domains.blocksworld.generator: blocks=5, seed=21, split=train
(define (problem blocksworld-n5-s21-train)
  (:domain blocksworld-4ops)
  (:objects b1 b2 b3 b4 b5)
  (:init
    (arm-empty)
    (on b1 b3)
    (on b2 b1)
    (on-table b3)
    (on b4 b5)
    (on b5 b2)
    (clear b4)
  )
  (:goal (and
    (on b1 b2)
    (on b2 b3)
  ))
)
